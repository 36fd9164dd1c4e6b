package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/auditchain"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// AppendAudit appends an entry to the audit log; a zero At is stamped with
// the store's clock. The table refuses updates and deletes. The entry is
// chained (store/auditchain) in one transaction: the chain's head row is
// locked (SELECT ... FOR UPDATE), the row written linking to it (its id
// drawn under the lock, so that ids follow the chain with any number of
// instances), and the head moved to it. That costs three round trips more
// than a lone INSERT, and appends from all instances take turns on the
// lock, each holding it for two round trips.
func (db *DB) AppendAudit(ctx context.Context, e record.AuditEntry) error {
	if e.At.IsZero() {
		e.At = db.now()
	}
	e = storableEntry(e) // hashed as it is stored
	err := pgq.BeginFunc(ctx, db.pool, func(tx pgq.Tx) error {
		a, err := auditAnchor(ctx, tx, " FOR UPDATE")
		if err != nil {
			return err
		}
		prev := auditchain.Head(a)
		hash := auditchain.Sum(prev, e)
		_, err = tx.Exec(ctx, `WITH row AS (INSERT INTO audit
			(at, conv, tool, args, requested_by, approved_by, outcome, detail, token, instance, prev_hash, hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id)
			UPDATE audit_chain SET head_id = (SELECT id FROM row), head_hash = $12 WHERE one = 1`,
			nanos(e.At), e.Conv, e.Tool, e.Args, string(e.RequestedBy), string(e.ApprovedBy), e.Outcome, e.Detail,
			e.Token, e.Instance, prev, hash)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: append audit: %w", err)
	}
	return nil
}

// storableEntry is e with its texts as the server stores them
// (textutil.Storable, as every argument of this package's statements), so
// that a row's hash is that of what WalkAudit reads back.
func storableEntry(e record.AuditEntry) record.AuditEntry {
	for _, s := range []*string{&e.Conv, &e.Tool, &e.Args, &e.Outcome, &e.Detail, &e.Token, &e.Instance} {
		*s = textutil.Storable(*s)
	}
	e.RequestedBy = core.Identity(textutil.Storable(string(e.RequestedBy)))
	e.ApprovedBy = core.Identity(textutil.Storable(string(e.ApprovedBy)))
	return e
}

// AuditAnchor returns where the audit chain begins and its recorded head.
func (db *DB) AuditAnchor(ctx context.Context) (record.AuditAnchor, error) {
	a, err := auditAnchor(ctx, db.pool, "")
	if err != nil {
		return a, fmt.Errorf("postgres: audit anchor: %w", err)
	}
	return a, nil
}

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgq.Row
}

func auditAnchor(ctx context.Context, q queryRower, lock string) (record.AuditAnchor, error) {
	var a record.AuditAnchor
	err := q.QueryRow(ctx, `SELECT anchor_id, anchor_rows, head_id, head_hash FROM audit_chain WHERE one = 1`+lock).
		Scan(&a.AnchorID, &a.AnchorRows, &a.HeadID, &a.HeadHash)
	return a, err
}

// WalkAudit calls fn with every audit row in id order, stopping at fn's
// first error, which it returns.
func (db *DB) WalkAudit(ctx context.Context, fn func(record.AuditRow) error) error {
	rows, err := db.pool.Query(ctx, `SELECT id, `+auditColumns+`, prev_hash, hash FROM audit ORDER BY id`)
	if err != nil {
		return fmt.Errorf("postgres: walk audit: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r record.AuditRow
		var at int64
		var requestedBy, approvedBy string
		e := &r.Entry
		err := rows.Scan(&r.ID, &at, &e.Conv, &e.Tool, &e.Args, &requestedBy, &approvedBy, &e.Outcome, &e.Detail, &e.Token, &e.Instance, &r.Prev, &r.Hash)
		if err != nil {
			return fmt.Errorf("postgres: walk audit: %w", err)
		}
		e.At, e.RequestedBy, e.ApprovedBy = fromNanos(at), core.Identity(requestedBy), core.Identity(approvedBy)
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: walk audit: %w", err)
	}
	return nil
}

// auditColumns are an entry's columns, in record.AuditEntry's order.
const auditColumns = `at, conv, tool, args, requested_by, approved_by, outcome, detail, token, instance`

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
	if f.Token != "" {
		add("token =", f.Token)
	}
	query := `SELECT ` + auditColumns + ` FROM audit`
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
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (record.AuditEntry, error) {
		var e record.AuditEntry
		var at int64
		var requestedBy, approvedBy string
		err := r.Scan(&at, &e.Conv, &e.Tool, &e.Args, &requestedBy, &approvedBy, &e.Outcome, &e.Detail, &e.Token, &e.Instance)
		e.At, e.RequestedBy, e.ApprovedBy = fromNanos(at), core.Identity(requestedBy), core.Identity(approvedBy)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: query audit: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}
