package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestReadOnlyDirectory: `bot audit` and `bot doctor` read a database whose
// directory they may not write (a read-only mount, another user's
// directory) and leave it as it was. SQLite cannot create the -shm file it
// reads a WAL database through there; a read-only Open used to fail with
// "not a gatehouse database: attempt to write a readonly database". As root
// (where permissions do not bind) the test re-runs itself as nobody.
func TestReadOnlyDirectory(t *testing.T) {
	if os.Getuid() == 0 {
		testutil.RerunAsNobody(t, "TestReadOnlyDirectory", nil)
		return
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "gatehouse.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	mustNoErr(t, err)
	mustNoErr(t, db.AppendAudit(ctx, record.AuditEntry{Conv: "c:1", Tool: "shell", Outcome: "executed"}))
	mustNoErr(t, db.Close())
	before := names(t, dir)
	mustNoErr(t, os.Chmod(dir, 0o555))
	t.Cleanup(func() { os.Chmod(dir, 0o755) }) //nolint:errcheck // so that TempDir can remove it

	ro, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open in a read-only directory: %v", err)
	}
	got, err := ro.QueryAudit(ctx, record.AuditFilter{})
	if err != nil || len(got) != 1 || got[0].Tool != "shell" {
		t.Errorf("QueryAudit = %v, %v; want the one entry", got, err)
	}
	mustNoErr(t, ro.Close())
	if after := names(t, dir); !slices.Equal(after, before) {
		t.Errorf("files after a read-only Open: %v; want %v", after, before)
	}
}

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	mustNoErr(t, err)
	var ns []string
	for _, e := range es {
		ns = append(ns, e.Name())
	}
	return ns
}
