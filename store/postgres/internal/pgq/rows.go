package pgq

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNoRows is what a Row's Scan returns when the query gave no row. It
// is sql.ErrNoRows too (errors.Is), as pgx's is.
var ErrNoRows error = noRows{}

type noRows struct{}

func (noRows) Error() string        { return "no rows in result set" }
func (noRows) Is(target error) bool { return target == sql.ErrNoRows }

// Rows are a query's rows, read with Next and Scan. Close (which Next
// calls after the last row) ends the query; Err is its error.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Close()
	Err() error
}

// Row is one row: Scan reads it, or returns the query's error, or
// ErrNoRows.
type Row interface {
	Scan(dest ...any) error
}

// CollectableRow is the row CollectRows gives its function.
type CollectableRow interface {
	Scan(dest ...any) error
}

// RowToFunc makes a T of a row.
type RowToFunc[T any] func(row CollectableRow) (T, error)

// CollectRows reads every row of rows with fn and closes them: an empty
// (not nil) slice when there is none.
func CollectRows[T any](rows Rows, fn RowToFunc[T]) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := fn(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// RowTo scans a row of one column into a T.
func RowTo[T any](row CollectableRow) (T, error) {
	var v T
	err := row.Scan(&v)
	return v, err
}

// rows reads one statement's result.
type rows struct {
	c      *Conn // nil in a batch
	sql    string
	rr     *pgconn.ResultReader
	err    error
	tag    pgconn.CommandTag
	closed bool
	done   func() // when closed: a pool's query gives its connection back
}

func (r *rows) Next() bool {
	if r.closed {
		return false
	}
	if r.rr.NextRow() {
		return true
	}
	r.Close()
	return false
}

func (r *rows) Scan(dest ...any) error {
	if r.closed {
		if r.err != nil {
			return r.err
		}
		return errors.New("pgq: scan of closed rows")
	}
	vals := r.rr.Values()
	if len(dest) != len(vals) {
		return r.fail(fmt.Errorf("pgq: %d columns scanned into %d destinations", len(vals), len(dest)))
	}
	fields := r.rr.FieldDescriptions()
	for i, d := range dest {
		if err := scanValue(&fields[i], vals[i], d); err != nil {
			return r.fail(fmt.Errorf("pgq: column %d (%s): %w", i+1, fields[i].Name, err))
		}
	}
	return nil
}

// fail closes the rows with err, which Err then returns.
func (r *rows) fail(err error) error {
	if r.err == nil {
		r.err = err
	}
	r.Close()
	return err
}

func (r *rows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	tag, err := r.rr.Close()
	r.tag = tag
	if r.err == nil {
		r.err = err
	}
	if err != nil && r.c != nil {
		r.c.forget(r.sql, err)
	}
	if r.done != nil {
		r.done()
		r.done = nil
	}
}

func (r *rows) Err() error { return r.err }

// row is QueryRow's row: the query's rows or the error that stopped it.
type row struct {
	r   *rows
	err error
}

func (w row) Scan(dest ...any) error {
	if w.err != nil {
		return w.err
	}
	defer w.r.Close()
	if !w.r.Next() {
		if err := w.r.Err(); err != nil {
			return err
		}
		return ErrNoRows
	}
	if err := w.r.Scan(dest...); err != nil {
		return err
	}
	w.r.Close()
	return w.r.Err()
}
