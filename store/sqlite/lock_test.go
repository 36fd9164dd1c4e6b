package sqlite_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestOpenLocksTheDatabase: while one handle holds the database, a second
// writable Open is refused with ErrLocked, naming the path, and leaves the
// file as it was; read-only opens still work; Close releases the lock.
func TestOpenLocksTheDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "gatehouse.db")
	first, err := sqlite.Open(ctx, path, sqlite.Options{})
	mustNoErr(t, err)
	mustNoErr(t, first.AppendAudit(ctx, record.AuditEntry{Conv: "c:1", Tool: "shell", Outcome: "executed"}))
	before := fileState(t, path)

	for _, dsn := range []string{path, "file:" + path + "?cache=private"} {
		_, err = sqlite.Open(ctx, dsn, sqlite.Options{})
		if !errors.Is(err, sqlite.ErrLocked) || !strings.Contains(err.Error(), path) {
			t.Fatalf("second Open(%s) = %v; want ErrLocked naming %s", dsn, err, path)
		}
	}
	link := filepath.Join(dir, "link.db")
	mustNoErr(t, os.Symlink(path, link))
	if _, err := sqlite.Open(ctx, link, sqlite.Options{}); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("Open through a symlink = %v; want ErrLocked", err)
	}
	if after := fileState(t, path); after != before {
		t.Errorf("a refused Open changed the database: %s -> %s", before, after)
	}

	ro, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
	mustNoErr(t, err)
	if got, err := ro.QueryAudit(ctx, record.AuditFilter{}); err != nil || len(got) != 1 {
		t.Fatalf("read-only QueryAudit beside the holder = %v, %v", got, err)
	}
	mustNoErr(t, ro.Close())

	mustNoErr(t, first.Close())
	again, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("Open after the holder closed: %v", err)
	}
	mustNoErr(t, again.Close())
}

// fileState is a file's modification time and content hash.
func fileState(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Stat(path)
	mustNoErr(t, err)
	b, err := os.ReadFile(path)
	mustNoErr(t, err)
	return fmt.Sprintf("%s %x", fi.ModTime(), sha256.Sum256(b))
}
