package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// MarkReminded records, in one conditional UPDATE, that the reminder of
// a pending approval whose Expires is after now, not reminded before, is
// being sent: Reminded becomes now. Any other approval gives
// record.ErrNotPending (an unknown token record.ErrNotFound): of several
// instances sweeping, one sends it.
func (db *DB) MarkReminded(ctx context.Context, token string, now time.Time) error {
	return db.nudge(ctx, "mark reminded", `reminded = $4`, `reminded = 0`, token, now, nanos(now))
}

// MarkEscalated records, in one conditional UPDATE, that step step of
// hitl.escalate (from 0) is being taken for a pending approval whose
// Expires is after now and that has taken exactly step steps: Escalated
// becomes step+1. Any other approval gives record.ErrNotPending (an
// unknown token record.ErrNotFound): of several instances, one takes it.
func (db *DB) MarkEscalated(ctx context.Context, token string, step int, now time.Time) error {
	return db.nudge(ctx, "mark escalated", `escalated = escalated + 1`, `escalated = $4`, token, now, step)
}

// nudge runs one conditional UPDATE of a pending, unexpired approval; $4
// is arg, in set or in cond.
func (db *DB) nudge(ctx context.Context, what, set, cond, token string, now time.Time, arg any) error {
	tag, err := db.pool.Exec(ctx, `UPDATE approvals SET `+set+`
		WHERE token = $1 AND status = $2 AND expires > $3 AND `+cond,
		token, string(record.StatusPending), nanos(now), arg)
	if err != nil {
		return fmt.Errorf("postgres: %s: %w", what, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if _, err := db.Approval(ctx, token); err != nil {
		return err
	}
	return fmt.Errorf("postgres: %s: %w", what, record.ErrNotPending)
}
