package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// querier is what *sql.DB and *sql.Tx share for reading.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getApproval(ctx context.Context, q querier, token string) (record.Approval, error) {
	row := q.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE token = ?`, token)
	a, err := scanApproval(row)
	if errors.Is(err, sql.ErrNoRows) {
		return record.Approval{}, record.ErrNotFound
	}
	if err != nil {
		return record.Approval{}, fmt.Errorf("sqlite: approval: %w", err)
	}
	return a, nil
}

func listApprovals(ctx context.Context, q querier, statuses []record.Status) ([]record.Approval, error) {
	query := `SELECT ` + approvalColumns + ` FROM approvals`
	if len(statuses) > 0 {
		query += ` WHERE status IN ` + placeholders(len(statuses))
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY created, rowid`, statusArgs(statuses)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list approvals: %w", err)
	}
	defer rows.Close()
	var out []record.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list approvals: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list approvals: %w", err)
	}
	return out, nil
}

func scanApproval(row interface{ Scan(...any) error }) (record.Approval, error) {
	var a record.Approval
	var created, expires, resolvedAt, reminded int64
	err := row.Scan(&a.Token, &a.Conv.Gateway, &a.Conv.Chat, &a.Conv.Thread, &a.RequestedBy,
		&a.Call.ID, &a.Call.Name, &a.Call.Args, &a.Digest, &a.Rule, &a.Reason,
		&created, &expires, &a.Status, &a.ResolvedBy, &resolvedAt, &a.Note, &reminded, &a.Escalated)
	if err != nil {
		return record.Approval{}, err
	}
	a.Created, a.Expires, a.ResolvedAt = fromNanos(created), fromNanos(expires), fromNanos(resolvedAt)
	a.Reminded = fromNanos(reminded)
	return a, nil
}

// placeholders returns "(?, ?, …)" with n marks.
func placeholders(n int) string {
	return "(?" + strings.Repeat(", ?", n-1) + ")"
}

func statusArgs(statuses []record.Status) []any {
	args := make([]any, len(statuses))
	for i, s := range statuses {
		args[i] = s
	}
	return args
}
