package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// TestReadOnly: `bot audit` reads without creating, migrating, pruning or
// writing anything.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if _, err := sqlite.Open(ctx, missing, sqlite.Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only Open of a missing file succeeded")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read-only Open created %s", missing)
	}

	path := filepath.Join(dir, "gatehouse.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	mustNoErr(t, err)
	mustNoErr(t, db.Append(ctx, "c:1", llm.Message{Role: llm.RoleUser, Content: "old"}))
	mustNoErr(t, db.AppendAudit(ctx, record.AuditEntry{Conv: "c:1", Tool: "shell", Outcome: "executed"}))
	mustNoErr(t, db.Close())

	later := storetest.NewClock(time.Now().Add(1000 * time.Hour))
	ro := openAt(t, path, sqlite.Options{ReadOnly: true, Retention: time.Hour, Now: later.Now})
	assertContents(t, ro, "c:1", "old") // not pruned
	if got, err := ro.QueryAudit(ctx, record.AuditFilter{}); err != nil || len(got) != 1 {
		t.Fatalf("read-only QueryAudit = %v, %v", got, err)
	}
	if err := ro.AppendAudit(ctx, record.AuditEntry{Conv: "c:1", Tool: "t", Outcome: "executed"}); err == nil {
		t.Error("read-only AppendAudit succeeded")
	}
	if n, err := ro.Prune(ctx); err == nil {
		t.Errorf("read-only Prune = %d, nil; want an error", n)
	}
}

func TestReadOnlySchemaMismatch(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		version int
		want    string
	}{
		{sqlite.SchemaVersion() + 1, "newer than this gatehouse"},
		{sqlite.SchemaVersion() - 1, "older than this gatehouse"},
	} {
		path := filepath.Join(t.TempDir(), "gatehouse.db")
		db, err := sqlite.Open(ctx, path, sqlite.Options{})
		mustNoErr(t, err)
		mustNoErr(t, db.Close())
		raw, err := sql.Open("sqlite", path)
		mustNoErr(t, err)
		_, err = raw.Exec(`UPDATE schema_version SET version = ?`, tt.version)
		mustNoErr(t, errors.Join(err, raw.Close()))
		_, err = sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("read-only Open of version %d: error = %v; want %q", tt.version, err, tt.want)
		}
		if old := tt.version < sqlite.SchemaVersion(); errors.Is(err, store.ErrSchemaOld) != old {
			t.Errorf("read-only Open of version %d: errors.Is(%v, store.ErrSchemaOld) = %v; want %v", tt.version, err, !old, old)
		}
	}
}
