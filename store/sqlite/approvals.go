package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

const approvalColumns = `token, conv_gateway, conv_chat, conv_thread, requested_by,
	call_id, tool, args, digest, rule, reason, created, expires, status,
	resolved_by, resolved_at, note, reminded, escalated`

// CreateApproval stores a new approval; a token already stored gives
// record.ErrDuplicate.
func (db *DB) CreateApproval(ctx context.Context, a record.Approval) error {
	if a.Token == "" {
		return fmt.Errorf("sqlite: create approval: empty token")
	}
	return db.inTx(ctx, "create approval", durable, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO approvals (conv, `+approvalColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (token) DO NOTHING`,
			a.Conv.Key(), a.Token, a.Conv.Gateway, a.Conv.Chat, a.Conv.Thread, a.RequestedBy,
			a.Call.ID, a.Call.Name, a.Call.Args, a.Digest, a.Rule, a.Reason,
			nanos(a.Created), nanos(a.Expires), a.Status, a.ResolvedBy, nanos(a.ResolvedAt), a.Note,
			nanos(a.Reminded), a.Escalated)
		if err != nil {
			return fmt.Errorf("sqlite: create approval: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: create approval: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("sqlite: create approval: %w", record.ErrDuplicate)
		}
		return nil
	})
}

// Approval returns the approval with the token, or record.ErrNotFound.
func (db *DB) Approval(ctx context.Context, token string) (record.Approval, error) {
	return getApproval(ctx, db.r, token)
}

// ClaimApproval is the exactly-once point: in one write transaction it moves
// the approval from pending to `to` if it is still pending and expires after
// now. Of any number of concurrent claimants exactly one gets a nil error.
// The others get record.ErrNotPending with the approval as it is;
// an unknown token gets record.ErrNotFound.
func (db *DB) ClaimApproval(ctx context.Context, token string, to record.Status, by core.Identity, note string, now time.Time) (record.Approval, error) {
	if to != record.StatusExecuting && to != record.StatusDenied {
		return record.Approval{}, fmt.Errorf("sqlite: claim approval: cannot claim to status %q", to)
	}
	var a record.Approval
	var claimErr error
	err := db.inTx(ctx, "claim approval", durable, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE approvals
			SET status = ?, resolved_by = ?, resolved_at = ?, note = ?
			WHERE token = ? AND status = ? AND expires > ?`,
			to, by, nanos(now), note, token, record.StatusPending, nanos(now))
		if err != nil {
			return fmt.Errorf("sqlite: claim approval: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: claim approval: %w", err)
		}
		if a, err = getApproval(ctx, tx, token); err != nil {
			return err
		}
		if n != 1 {
			claimErr = record.ErrNotPending
		}
		return nil
	})
	if err != nil {
		return record.Approval{}, err
	}
	return a, claimErr
}

// finishCondition is the condition (and its arguments) an approval must
// meet to be finished to status to.
func finishCondition(to record.Status, now time.Time) (string, []any, error) {
	switch to {
	case record.StatusExecuted, record.StatusFailed, record.StatusInterrupted:
		return `status = ?`, []any{record.StatusExecuting}, nil
	case record.StatusExpired:
		return `status = ? AND expires <= ?`, []any{record.StatusPending, nanos(now)}, nil
	}
	return "", nil, fmt.Errorf("sqlite: finish approval: cannot finish to status %q", to)
}

// FinishApproval records the end state of an approval: executed, failed or
// interrupted after the claim to executing, or expired while pending once
// Expires is not after now (ResolvedAt then becomes now). Note replaces the
// approval's note. Any other state gives record.ErrNotPending, so of
// concurrent finishers exactly one succeeds; an unknown token gives
// record.ErrNotFound.
func (db *DB) FinishApproval(ctx context.Context, token string, to record.Status, note string, now time.Time) error {
	cond, condArgs, err := finishCondition(to, now)
	if err != nil {
		return err
	}
	args := append([]any{to, note, record.StatusPending, nanos(now), token}, condArgs...)
	return db.inTx(ctx, "finish approval", durable, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE approvals
			SET status = ?, note = ?,
			    resolved_at = CASE WHEN status = ? THEN ? ELSE resolved_at END
			WHERE token = ? AND `+cond, args...)
		if err != nil {
			return fmt.Errorf("sqlite: finish approval: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: finish approval: %w", err)
		}
		if n == 1 {
			return nil
		}
		if _, err := getApproval(ctx, tx, token); err != nil {
			return err
		}
		return fmt.Errorf("sqlite: finish approval: %w", record.ErrNotPending)
	})
}

// Approvals lists the approvals with any of the statuses (all approvals when
// none is given), oldest first.
func (db *DB) Approvals(ctx context.Context, statuses ...record.Status) ([]record.Approval, error) {
	return listApprovals(ctx, db.r, statuses)
}
