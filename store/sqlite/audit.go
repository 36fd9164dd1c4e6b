package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// AppendAudit appends an entry to the audit log; a zero At is stamped with
// the store's clock. The table refuses updates and deletes.
func (db *DB) AppendAudit(ctx context.Context, e record.AuditEntry) error {
	if e.At.IsZero() {
		e.At = db.now()
	}
	return db.inTx(ctx, "append audit", durable, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit
			(at, conv, tool, args, requested_by, approved_by, outcome, detail, instance)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			nanos(e.At), e.Conv, e.Tool, e.Args, e.RequestedBy, e.ApprovedBy, e.Outcome, e.Detail, e.Instance)
		if err != nil {
			return fmt.Errorf("sqlite: append audit: %w", err)
		}
		return nil
	})
}

// QueryAudit returns the entries matching f OLDEST FIRST, by At and then
// by order of appending; Since is inclusive. A positive Limit keeps the
// newest Limit matching entries (still oldest first).
func (db *DB) QueryAudit(ctx context.Context, f record.AuditFilter) ([]record.AuditEntry, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if f.Conv != "" {
		add("conv = ?", f.Conv)
	}
	if f.Tool != "" {
		add("tool = ?", f.Tool)
	}
	if f.Outcome != "" {
		add("outcome = ?", f.Outcome)
	}
	if !f.Since.IsZero() {
		add("at >= ?", nanos(f.Since))
	}
	query := `SELECT at, conv, tool, args, requested_by, approved_by, outcome, detail, instance FROM audit`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY at DESC, id DESC"
	if f.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, f.Limit)
	}
	out, err := db.queryAudit(ctx, query, args)
	slices.Reverse(out)
	return out, err
}

func (db *DB) queryAudit(ctx context.Context, query string, args []any) ([]record.AuditEntry, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query audit: %w", err)
	}
	defer rows.Close()
	var out []record.AuditEntry
	for rows.Next() {
		var e record.AuditEntry
		var at int64
		err := rows.Scan(&at, &e.Conv, &e.Tool, &e.Args, &e.RequestedBy, &e.ApprovedBy, &e.Outcome, &e.Detail, &e.Instance)
		if err != nil {
			return nil, fmt.Errorf("sqlite: query audit: %w", err)
		}
		e.At = fromNanos(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: query audit: %w", err)
	}
	return out, nil
}
