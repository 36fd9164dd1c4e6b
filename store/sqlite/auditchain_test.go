package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/gatehouse-bot/gatehouse/store/sqlite"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// preChainVersion is the last schema without the audit chain.
const preChainVersion = 14

// TestAuditChainContract: the audit log's hash chain on SQLite, on a new
// database and on one upgraded from schema 14 with audit rows in it; the
// tampering goes around the append-only triggers by dropping them, as
// the file's owner can.
func TestAuditChainContract(t *testing.T) {
	storetest.AuditChainContract(t, func(t *testing.T, legacy int) storetest.ChainFixture {
		path := filepath.Join(t.TempDir(), "gatehouse.db")
		if legacy > 0 {
			writePreChain(t, path, legacy)
		}
		db := openAt(t, path, sqlite.Options{})
		raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
		mustNoErr(t, err)
		t.Cleanup(func() { raw.Close() })
		return storetest.ChainFixture{
			Store:   db,
			Exec:    func(q string) error { _, err := raw.Exec(q); return err },
			Unguard: `DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete`,
		}
	})
}

// writePreChain creates at path a database of schema 14 (goose, the
// migrations as shipped before the chain) holding n audit rows.
func writePreChain(t *testing.T, path string, n int) {
	t.Helper()
	ctx := context.Background()
	raw, err := sql.Open("sqlite", path)
	mustNoErr(t, err)
	defer raw.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, os.DirFS("migrations"),
		goose.WithDisableGlobalRegistry(true), goose.WithLogger(goose.NopLogger()))
	mustNoErr(t, err)
	_, err = p.UpTo(ctx, preChainVersion)
	mustNoErr(t, err)
	for i := range n {
		_, err := raw.Exec(`INSERT INTO audit (at, conv, tool, args, requested_by, approved_by, outcome, detail)
			VALUES (?, 'console:local', 'shell', ?, 'console:local', 'console:local', 'executed', 'exit 0')`,
			int64(1_700_000_000_000_000_000+i), fmt.Sprintf(`{"command":"echo %d"}`, i))
		mustNoErr(t, err)
	}
}
