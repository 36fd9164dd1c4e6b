package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// AppendAudit appends an entry to the audit log; a zero At is stamped with
// the store's clock. The table refuses updates and deletes.
func (db *DB) AppendAudit(ctx context.Context, e record.AuditEntry) error {
	if e.At.IsZero() {
		e.At = db.now()
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO audit
		(at, conv, tool, args, requested_by, approved_by, outcome, detail, instance)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		nanos(e.At), e.Conv, e.Tool, e.Args, string(e.RequestedBy), string(e.ApprovedBy), e.Outcome, e.Detail, e.Instance)
	if err != nil {
		return fmt.Errorf("postgres: append audit: %w", err)
	}
	return nil
}

// QueryAudit returns the entries matching f OLDEST FIRST, by At and then
// by order of appending; Since is inclusive. A positive Limit keeps the
// newest Limit matching entries (still oldest first).
func (db *DB) QueryAudit(ctx context.Context, f record.AuditFilter) ([]record.AuditEntry, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, cond+" $"+strconv.Itoa(len(args)))
	}
	if f.Conv != "" {
		add("conv =", f.Conv)
	}
	if f.Tool != "" {
		add("tool =", f.Tool)
	}
	if f.Outcome != "" {
		add("outcome =", f.Outcome)
	}
	if !f.Since.IsZero() {
		add("at >=", nanos(f.Since))
	}
	query := `SELECT at, conv, tool, args, requested_by, approved_by, outcome, detail, instance FROM audit`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY at DESC, id DESC"
	if f.Limit > 0 {
		args = append(args, f.Limit)
		query += " LIMIT $" + strconv.Itoa(len(args))
	}
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: query audit: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.AuditEntry, error) {
		var e record.AuditEntry
		var at int64
		var requestedBy, approvedBy string
		err := r.Scan(&at, &e.Conv, &e.Tool, &e.Args, &requestedBy, &approvedBy, &e.Outcome, &e.Detail, &e.Instance)
		e.At, e.RequestedBy, e.ApprovedBy = fromNanos(at), core.Identity(requestedBy), core.Identity(approvedBy)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: query audit: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}
