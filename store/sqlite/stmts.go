package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// stmtKey names a prepared statement: the pool it runs on and its text.
type stmtKey struct {
	pool  *sql.DB
	query string
}

// stmtCache keeps the statements of the per-message path prepared: SQLite
// parses and plans a statement on every Exec or Query of its text, which
// was a fifth of the store's cost of a message. database/sql prepares a
// cached statement again on each connection of a pool as it is used, and a
// transaction borrows it with Tx.StmtContext.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[stmtKey]*sql.Stmt
}

// prepared returns query prepared on pool, preparing it on first use.
func (c *stmtCache) prepared(ctx context.Context, pool *sql.DB, query string) (*sql.Stmt, error) {
	k := stmtKey{pool, query}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[k]; ok {
		return st, nil
	}
	st, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	if c.stmts == nil {
		c.stmts = make(map[stmtKey]*sql.Stmt)
	}
	c.stmts[k] = st
	return st, nil
}

// close closes every cached statement.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for k, st := range c.stmts {
		errs = append(errs, st.Close())
		delete(c.stmts, k)
	}
	return errors.Join(errs...)
}

// unwatched returns ctx without its cancellation once ctx is checked, for
// the cached statements on the writer: each is short (a row, or a
// conversation's newest messages by an index), and a cancellable context
// costs more than the statement. The driver watches one with a goroutine
// of its own for every call, to interrupt SQLite, and database/sql a
// Rows' with another: with a caller that keeps a core busy, they and the
// threads they wake are half of the store's CPU for a message
// (BenchmarkMessageStore: 0.69 ms with them, 0.33 without, on 2 shared
// cores); in the bot's paced burst, about 1 % of its CPU. A cancellation
// is seen before the statement starts, not within its microseconds; a wait
// for the writer is as long as the write that holds it (each short, or
// bounded by busy_timeout). The read pool's statements keep their context
// (the readiness probe's timeout ends a wait for a reader).
func unwatched(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// prepare checks ctx and returns it unwatched, with query prepared on pool.
func (db *DB) prepare(ctx context.Context, pool *sql.DB, query string) (context.Context, *sql.Stmt, error) {
	ctx, err := unwatched(ctx)
	if err != nil {
		return nil, nil, err
	}
	st, err := db.stmts.prepared(ctx, pool, query)
	return ctx, st, err
}

// queryRow runs a cached one-row query on the read pool.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := db.stmts.prepared(ctx, db.r, query)
	if err != nil {
		// A Row carrying err is made by running the query unprepared: its
		// Scan reports the same failure.
		return db.r.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// query runs a cached query on the read pool.
func (db *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := db.stmts.prepared(ctx, db.r, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// queryWriter runs a cached query on the writer (see Load for when).
func (db *DB) queryWriter(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx, st, err := db.prepare(ctx, db.w, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}
