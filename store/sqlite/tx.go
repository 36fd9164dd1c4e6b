package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Durability of a write transaction.
const (
	// relaxed commits survive a crash of the process; a power loss may
	// roll back the last ones (WAL with synchronous=NORMAL). For history,
	// usage and cursors.
	relaxed = false
	// durable commits are on disk when they return (synchronous=FULL):
	// approvals, standing allows and the audit log, so that a claimed
	// approval stays claimed even across a power loss.
	durable = true
)

// inTx runs fn in a write transaction (BEGIN IMMEDIATE on the one writer
// connection) and commits it when fn returns nil. what names the operation
// in errors.
func (db *DB) inTx(ctx context.Context, what string, dur bool, fn func(tx *sql.Tx) error) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", what, err)
	}
	defer conn.Close()
	if dur {
		if _, err := conn.ExecContext(ctx, "PRAGMA synchronous=FULL"); err != nil {
			return fmt.Errorf("sqlite: %s: synchronous: %w", what, err)
		}
		defer func() {
			// A failure leaves the connection at FULL: slower, never less safe.
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA synchronous=NORMAL")
		}()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %s: begin: %w", what, err)
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, rollback(tx))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %s: commit: %w", what, err)
	}
	return nil
}

// nanos stores t as Unix nanoseconds; the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos reverses nanos, in UTC.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
