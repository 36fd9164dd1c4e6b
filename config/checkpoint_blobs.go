package config

// MaxDatabaseBlob bounds tools.checkpoints.max_file when the checkpoint
// blobs are in the database (store.driver postgres): each is one bytea
// value, held in memory while it is written and read back.
const MaxDatabaseBlob = 256 << 20

// checkDatabaseBlobs checks tools.checkpoints against the store that keeps
// the blobs.
func (c *Config) checkDatabaseBlobs(ch *checker) {
	cp := c.Tools.Checkpoints
	if c.Store.Driver != "postgres" || !cp.Enabled || cp.MaxFile <= MaxDatabaseBlob {
		return
	}
	ch.fail("tools.checkpoints.max_file", "%s is over %s, the most a checkpoint blob may be in the database (store.driver postgres)",
		cp.MaxFile, Size(MaxDatabaseBlob))
}
