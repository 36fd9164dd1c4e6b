package pgq

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrTxClosed is what a transaction's methods return once it is committed
// or rolled back.
var ErrTxClosed = errors.New("tx is closed")

// ErrTxCommitRollback is what Commit returns when the server rolled the
// transaction back instead (an earlier statement of it failed).
var ErrTxCommitRollback = errors.New("commit unexpectedly resulted in rollback")

// Tx is a transaction on one connection.
type Tx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Beginner begins transactions: a Pool, or a wrapper of one.
type Beginner interface {
	Begin(ctx context.Context) (Tx, error)
}

// Begin begins a transaction on a connection of the pool, given back when
// it ends.
func (p *Pool) Begin(ctx context.Context) (Tx, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		p.release(c)
		return nil, err
	}
	return &tx{Conn: c, release: func() { p.release(c) }}, nil
}

type tx struct {
	*Conn
	release func()
	closed  bool
}

func (t *tx) Commit(ctx context.Context) error {
	tag, err := t.end(ctx, "COMMIT")
	if err == nil && tag.String() == "ROLLBACK" {
		return ErrTxCommitRollback
	}
	return err
}

func (t *tx) Rollback(ctx context.Context) error {
	_, err := t.end(ctx, "ROLLBACK")
	return err
}

// end runs COMMIT or ROLLBACK, once, and gives the connection back.
func (t *tx) end(ctx context.Context, sql string) (pgconn.CommandTag, error) {
	if t.closed {
		return pgconn.CommandTag{}, ErrTxClosed
	}
	t.closed = true
	defer t.release()
	return t.Conn.Exec(ctx, sql)
}

// BeginFunc runs fn in a transaction of db: committed when fn returns
// nil, rolled back otherwise (as pgx.BeginFunc).
func BeginFunc(ctx context.Context, db Beginner, fn func(Tx) error) (err error) {
	t, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		rerr := t.Rollback(ctx)
		if rerr != nil && !errors.Is(rerr, ErrTxClosed) {
			err = rerr
		}
	}()
	if ferr := fn(t); ferr != nil {
		_ = t.Rollback(ctx) // fn's error is the one returned
		return ferr
	}
	return t.Commit(ctx)
}
