package postgres

import (
	"context"
	"database/sql"

	"github.com/gatehouse-bot/gatehouse/store/internal/migrate"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// migrateConn is a connection as migrate.UpConn runs on it (no
// database/sql driver of PostgreSQL in the binary). Migrations' text is
// ours: it is not made storable.
type migrateConn struct{ c *pgq.Conn }

var _ migrate.Conn = migrateConn{}

func (m migrateConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	_, err := m.c.Exec(ctx, query, args...)
	return nil, err
}

func (m migrateConn) QueryScan(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error {
	rows, err := m.c.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (m migrateConn) Begin(ctx context.Context) (migrate.Tx, error) {
	if _, err := m.c.Exec(ctx, `BEGIN`); err != nil {
		return nil, err
	}
	return migrateTx{m, ctx}, nil
}

// migrateTx is a transaction on a migrateConn.
type migrateTx struct {
	migrateConn
	ctx context.Context //nolint:containedctx // migrate.Tx's Commit and Rollback take none
}

func (t migrateTx) Commit() error {
	tag, err := t.c.Exec(t.ctx, `COMMIT`)
	if err == nil && tag.String() == "ROLLBACK" {
		err = pgq.ErrTxCommitRollback
	}
	return err
}

func (t migrateTx) Rollback() error {
	_, err := t.c.Exec(context.WithoutCancel(t.ctx), `ROLLBACK`)
	return err
}
