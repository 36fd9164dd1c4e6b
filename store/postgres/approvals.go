package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

const approvalColumns = `token, conv_gateway, conv_chat, conv_thread, requested_by,
	call_id, tool, args, digest, rule, reason, created, expires, status,
	resolved_by, resolved_at, note, instance, reminded, escalated`

// CreateApproval stores a new approval; a token already stored gives
// record.ErrDuplicate.
func (db *DB) CreateApproval(ctx context.Context, a record.Approval) error {
	if a.Token == "" {
		return fmt.Errorf("postgres: create approval: empty token")
	}
	tag, err := db.pool.Exec(ctx, `INSERT INTO approvals (conv, `+approvalColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
		ON CONFLICT (token) DO NOTHING`,
		a.Conv.Key(), a.Token, a.Conv.Gateway, a.Conv.Chat, a.Conv.Thread, string(a.RequestedBy),
		a.Call.ID, a.Call.Name, a.Call.Args, a.Digest, a.Rule, a.Reason,
		nanos(a.Created), nanos(a.Expires), string(a.Status), string(a.ResolvedBy), nanos(a.ResolvedAt), a.Note, a.Instance,
		nanos(a.Reminded), a.Escalated)
	if err != nil {
		return fmt.Errorf("postgres: create approval: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: create approval: %w", record.ErrDuplicate)
	}
	return nil
}

// Approval returns the approval with the token, or record.ErrNotFound.
func (db *DB) Approval(ctx context.Context, token string) (record.Approval, error) {
	a, err := scanApproval(db.pool.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE token = $1`, token))
	if errors.Is(err, pgq.ErrNoRows) {
		return record.Approval{}, record.ErrNotFound
	}
	if err != nil {
		return record.Approval{}, fmt.Errorf("postgres: approval: %w", err)
	}
	return a, nil
}

// ClaimApproval is the exactly-once point: one conditional UPDATE moves
// the approval from pending to `to` if it is still pending and expires
// after now, whichever connection or instance runs it. Of any number of
// concurrent claimants exactly one gets a nil error; the others get
// record.ErrNotPending with the approval as it is; an unknown token gets
// record.ErrNotFound.
func (db *DB) ClaimApproval(ctx context.Context, token string, to record.Status, by core.Identity, note string, now time.Time) (record.Approval, error) {
	return db.ClaimApprovalOn(ctx, "", token, to, by, note, now)
}

// ClaimApprovalOn is ClaimApproval recording instance as the instance that
// runs the call (hitl.SharedStore): another instance marks the run
// interrupted once instance's heartbeat is older than store.lease_ttl.
func (db *DB) ClaimApprovalOn(ctx context.Context, instance, token string, to record.Status, by core.Identity, note string, now time.Time) (record.Approval, error) {
	if to != record.StatusExecuting && to != record.StatusDenied {
		return record.Approval{}, fmt.Errorf("postgres: claim approval: cannot claim to status %q", to)
	}
	a, err := scanApproval(db.pool.QueryRow(ctx, `UPDATE approvals
		SET status = $1, resolved_by = $2, resolved_at = $3, note = $4, instance = $7
		WHERE token = $5 AND status = $6 AND expires > $3
		RETURNING `+approvalColumns,
		string(to), string(by), nanos(now), note, token, string(record.StatusPending), instance))
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, pgq.ErrNoRows) {
		return record.Approval{}, fmt.Errorf("postgres: claim approval: %w", err)
	}
	if a, err = db.Approval(ctx, token); err != nil {
		return record.Approval{}, err
	}
	return a, record.ErrNotPending
}

// finishCondition is the condition (its arguments from $6 on) an approval
// must meet to be finished to status to.
func finishCondition(to record.Status, now time.Time) (string, []any, error) {
	switch to {
	case record.StatusExecuted, record.StatusFailed, record.StatusInterrupted:
		return `status = $6`, []any{string(record.StatusExecuting)}, nil
	case record.StatusExpired:
		return `status = $6 AND expires <= $7`, []any{string(record.StatusPending), nanos(now)}, nil
	}
	return "", nil, fmt.Errorf("postgres: finish approval: cannot finish to status %q", to)
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
	args := append([]any{string(to), note, string(record.StatusPending), nanos(now), token}, condArgs...)
	tag, err := db.pool.Exec(ctx, `UPDATE approvals
		SET status = $1, note = $2,
		    resolved_at = CASE WHEN status = $3 THEN $4 ELSE resolved_at END
		WHERE token = $5 AND `+cond, args...)
	if err != nil {
		return fmt.Errorf("postgres: finish approval: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if _, err := db.Approval(ctx, token); err != nil {
		return err
	}
	return fmt.Errorf("postgres: finish approval: %w", record.ErrNotPending)
}

// Approvals lists the approvals with any of the statuses (all approvals when
// none is given), oldest first.
func (db *DB) Approvals(ctx context.Context, statuses ...record.Status) ([]record.Approval, error) {
	query := `SELECT ` + approvalColumns + ` FROM approvals`
	var args []any
	if len(statuses) > 0 {
		list := make([]string, len(statuses))
		for i, s := range statuses {
			list[i] = string(s)
		}
		query += ` WHERE status = ANY($1)`
		args = append(args, list)
	}
	rows, err := db.pool.Query(ctx, query+` ORDER BY created, seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list approvals: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (record.Approval, error) { return scanApproval(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list approvals: %w", err)
	}
	return out, nil
}

func scanApproval(row pgq.Row) (record.Approval, error) {
	var a record.Approval
	var created, expires, resolvedAt, reminded int64
	var escalated int32
	var requestedBy, status, resolvedBy string
	err := row.Scan(&a.Token, &a.Conv.Gateway, &a.Conv.Chat, &a.Conv.Thread, &requestedBy,
		&a.Call.ID, &a.Call.Name, &a.Call.Args, &a.Digest, &a.Rule, &a.Reason,
		&created, &expires, &status, &resolvedBy, &resolvedAt, &a.Note, &a.Instance, &reminded, &escalated)
	if err != nil {
		return record.Approval{}, err
	}
	a.RequestedBy, a.Status, a.ResolvedBy = core.Identity(requestedBy), record.Status(status), core.Identity(resolvedBy)
	a.Created, a.Expires, a.ResolvedAt = fromNanos(created), fromNanos(expires), fromNanos(resolvedAt)
	a.Reminded, a.Escalated = fromNanos(reminded), int(escalated)
	return a, nil
}
