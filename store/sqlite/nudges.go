package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// MarkReminded records that the reminder of a pending approval whose
// Expires is after now, not reminded before, is being sent: Reminded
// becomes now. Any other approval gives record.ErrNotPending (an unknown
// token record.ErrNotFound), so the reminder is sent once.
func (db *DB) MarkReminded(ctx context.Context, token string, now time.Time) error {
	return db.nudge(ctx, "mark reminded", token, now, `reminded = ?`, []any{nanos(now)}, `reminded = 0`, nil)
}

// MarkEscalated records that step step of hitl.escalate (from 0) is being
// taken for a pending approval whose Expires is after now and that has
// taken exactly step steps: Escalated becomes step+1. Any other approval
// gives record.ErrNotPending (an unknown token record.ErrNotFound), so
// each step is taken once.
func (db *DB) MarkEscalated(ctx context.Context, token string, step int, now time.Time) error {
	return db.nudge(ctx, "mark escalated", token, now, `escalated = escalated + 1`, nil, `escalated = ?`, []any{step})
}

// nudge runs one conditional UPDATE of a pending, unexpired approval:
// set (with setArgs) where cond (with condArgs) holds.
func (db *DB) nudge(ctx context.Context, what, token string, now time.Time, set string, setArgs []any, cond string, condArgs []any) error {
	args := append(append(setArgs, token, record.StatusPending, nanos(now)), condArgs...)
	return db.inTx(ctx, what, durable, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET `+set+`
			WHERE token = ? AND status = ? AND expires > ? AND `+cond, args...)
		if err != nil {
			return fmt.Errorf("sqlite: %s: %w", what, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: %s: %w", what, err)
		}
		if n == 1 {
			return nil
		}
		if _, err := getApproval(ctx, tx, token); err != nil {
			return err
		}
		return fmt.Errorf("sqlite: %s: %w", what, record.ErrNotPending)
	})
}
