package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// inTx runs fn in a write transaction (BEGIN IMMEDIATE on the one writer
// connection) and commits it when fn returns nil. what names the operation
// in errors.
func (db *DB) inTx(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
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
