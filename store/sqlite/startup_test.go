package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// dataVersion is SQLite's PRAGMA data_version on raw: it changes when
// another connection commits a change to the database.
func dataVersion(t *testing.T, raw *sql.Conn) int64 {
	t.Helper()
	var v int64
	mustNoErr(t, raw.QueryRowContext(context.Background(), `PRAGMA data_version`).Scan(&v))
	return v
}

// TestOpenCurrentSchemaCommitsNothing: opening a database whose schema is
// this build's, with the prune left for later (as the bot opens it),
// commits nothing: the schema's version is read and nothing rewritten,
// before the bot's first poll. Opened again with a prune, old history goes.
func TestOpenCurrentSchemaCommitsNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	old := time.Now().Add(-48 * time.Hour)
	db, err := sqlite.Open(ctx, path, sqlite.Options{Now: func() time.Time { return old }})
	mustNoErr(t, err)
	mustNoErr(t, db.Append(ctx, "telegram:1", llm.Message{Role: llm.RoleUser, Content: "old"}))
	mustNoErr(t, db.Close())

	pool, err := sql.Open("sqlite", path)
	mustNoErr(t, err)
	defer pool.Close()
	raw, err := pool.Conn(ctx)
	mustNoErr(t, err)
	defer raw.Close()
	before := dataVersion(t, raw)
	o := sqlite.Options{Retention: time.Hour, PruneLater: true}
	db, err = sqlite.Open(ctx, path, o)
	mustNoErr(t, err)
	if after := dataVersion(t, raw); after != before {
		t.Errorf("data_version %d after Open, %d before: opening a current database committed a change", after, before)
	}
	if msgs, err := db.Load(ctx, "telegram:1"); err != nil || len(msgs) != 1 {
		t.Errorf("history after Open with PruneLater = %d messages, %v; want the old one kept until Prune", len(msgs), err)
	}
	if n, err := db.Prune(ctx); err != nil || n != 1 {
		t.Errorf("Prune = %d, %v; want the old message", n, err)
	}
	mustNoErr(t, db.Close())
}
