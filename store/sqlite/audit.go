package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/store/auditchain"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// AppendAudit appends an entry to the audit log; a zero At is stamped with
// the store's clock. The table refuses updates and deletes. The entry is
// chained (store/auditchain): in its transaction the chain's head is read,
// the row written linking to it, and the head moved to it; the one writer
// serialises appends.
func (db *DB) AppendAudit(ctx context.Context, e record.AuditEntry) error {
	if e.At.IsZero() {
		e.At = db.now()
	}
	return db.inTx(ctx, "append audit", durable, func(tx *sql.Tx) error {
		a, err := auditAnchor(ctx, tx)
		if err != nil {
			return fmt.Errorf("sqlite: append audit: %w", err)
		}
		prev := auditchain.Head(a)
		hash := auditchain.Sum(prev, e)
		var id int64
		err = tx.QueryRowContext(ctx, `INSERT INTO audit
			(at, conv, tool, args, requested_by, approved_by, outcome, detail, token, prev_hash, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			nanos(e.At), e.Conv, e.Tool, e.Args, e.RequestedBy, e.ApprovedBy, e.Outcome, e.Detail,
			e.Token, prev, hash).Scan(&id)
		if err != nil {
			return fmt.Errorf("sqlite: append audit: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE audit_chain SET head_id = ?, head_hash = ? WHERE one = 1`, id, hash); err != nil {
			return fmt.Errorf("sqlite: append audit: chain head: %w", err)
		}
		return nil
	})
}

// AuditAnchor returns where the audit chain begins and its recorded head.
func (db *DB) AuditAnchor(ctx context.Context) (record.AuditAnchor, error) {
	a, err := auditAnchor(ctx, db.r)
	if err != nil {
		return a, fmt.Errorf("sqlite: audit anchor: %w", err)
	}
	return a, nil
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func auditAnchor(ctx context.Context, q queryRower) (record.AuditAnchor, error) {
	var a record.AuditAnchor
	err := q.QueryRowContext(ctx, `SELECT anchor_id, anchor_rows, head_id, head_hash FROM audit_chain WHERE one = 1`).
		Scan(&a.AnchorID, &a.AnchorRows, &a.HeadID, &a.HeadHash)
	return a, err
}

// WalkAudit calls fn with every audit row in id order, stopping at fn's
// first error, which it returns.
func (db *DB) WalkAudit(ctx context.Context, fn func(record.AuditRow) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT id, `+auditColumns+`, prev_hash, hash FROM audit ORDER BY id`)
	if err != nil {
		return fmt.Errorf("sqlite: walk audit: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r record.AuditRow
		var at int64
		e := &r.Entry
		err := rows.Scan(&r.ID, &at, &e.Conv, &e.Tool, &e.Args, &e.RequestedBy, &e.ApprovedBy, &e.Outcome, &e.Detail, &e.Token, &r.Prev, &r.Hash)
		if err != nil {
			return fmt.Errorf("sqlite: walk audit: %w", err)
		}
		e.At = fromNanos(at)
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: walk audit: %w", err)
	}
	return nil
}

// auditColumns are an entry's columns, in record.AuditEntry's order.
const auditColumns = `at, conv, tool, args, requested_by, approved_by, outcome, detail, token`

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
	if f.Token != "" {
		add("token = ?", f.Token)
	}
	query := `SELECT ` + auditColumns + ` FROM audit`
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
		err := rows.Scan(&at, &e.Conv, &e.Tool, &e.Args, &e.RequestedBy, &e.ApprovedBy, &e.Outcome, &e.Detail, &e.Token)
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
