package checkpoint

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fileIDs returns a file's inode and change time, which no tool can set
// back as it can the modification time.
func fileIDs(info fs.FileInfo) (uint64, time.Time) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, time.Time{}
	}
	return st.Ino, time.Unix(st.Ctim.Unix())
}

// syncFS makes everything written to the file system of dir durable: one
// call instead of one fsync per blob when a checkpoint copies many.
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
