package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx", for goose
	"github.com/pressly/goose/v3"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// preChainVersion is the last schema without the audit chain.
const preChainVersion = 14

// TestAuditChainContract: the audit log's hash chain on PostgreSQL, on a
// new database and on one upgraded from schema 14 with audit rows in it,
// with appends from many connections at once; the tampering goes around
// the append-only triggers by disabling them, as the database's owner can.
func TestAuditChainContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.AuditChainContract(t, func(t *testing.T, legacy int) storetest.ChainFixture {
		dsn := pgtest.DSN(t)
		if legacy > 0 {
			writePreChain(t, dsn, legacy)
		}
		db := openAt(t, dsn, postgres.Options{})
		pool, err := pgxpool.New(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		return storetest.ChainFixture{
			Store:   db,
			Exec:    func(q string) error { _, err := pool.Exec(context.Background(), q); return err },
			Unguard: `ALTER TABLE audit DISABLE TRIGGER USER`,
		}
	})
}

// writePreChain brings the database dsn names to schema 14 (goose, the
// migrations as shipped before the chain) and writes n audit rows.
func writePreChain(t *testing.T, dsn string, n int) {
	t.Helper()
	ctx := context.Background()
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, raw, os.DirFS("migrations"),
		goose.WithDisableGlobalRegistry(true), goose.WithLogger(goose.NopLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, preChainVersion); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		_, err := raw.Exec(`INSERT INTO audit (at, conv, tool, args, requested_by, approved_by, outcome, detail)
			VALUES ($1, 'console:local', 'shell', $2, 'console:local', 'console:local', 'executed', 'exit 0')`,
			int64(1_700_000_000_000_000_000+i), fmt.Sprintf(`{"command":"echo %d"}`, i))
		if err != nil {
			t.Fatal(err)
		}
	}
}
