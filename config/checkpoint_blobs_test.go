package config

import (
	"strings"
	"testing"
)

// TestCheckpointBlobsInTheDatabaseAreBounded: with store.driver postgres a
// checkpoint blob is one bytea value, held in memory while it is written
// and read: tools.checkpoints.max_file over 256MiB is an error naming the
// key; SQLite's blob directory keeps no such bound, and checkpoints off
// need none.
func TestCheckpointBlobsInTheDatabaseAreBounded(t *testing.T) {
	const pg = "store: {driver: postgres, dsn: \"postgres://u@h/db\"}\nhitl: {approvers: [console:local]}\n"
	_, err := Parse([]byte("tools: {checkpoints: {max_file: 257MiB, max_total: 1GiB}}\n"+pg), noEnv, specs())
	if err == nil || !strings.Contains(err.Error(), "tools.checkpoints.max_file") || !strings.Contains(err.Error(), "256MiB") {
		t.Errorf("max_file 257MiB on postgres: error %v, want one naming tools.checkpoints.max_file and 256MiB", err)
	}
	for _, ok := range []string{
		"tools: {checkpoints: {max_file: 256MiB, max_total: 1GiB}}\n" + pg,
		"tools: {checkpoints: {enabled: false, max_file: 1GiB, max_total: 1GiB}}\n" + pg,
		"tools: {checkpoints: {max_file: 1GiB, max_total: 2GiB}}\nhitl: {approvers: [console:local]}\n",
	} {
		if _, err := Parse([]byte(ok), noEnv, specs()); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
