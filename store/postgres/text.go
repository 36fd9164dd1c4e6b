package postgres

import (
	"context"
	"reflect"
	"slices"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// PostgreSQL refuses a NUL byte and invalid UTF-8 in text, which command
// output (find -print0, a binary file), web pages and MCP results hold as
// a matter of course: a refused write would lose a turn's history or an
// approval's end. Every statement's text arguments therefore pass through
// storableArgs, in one place: textPool and textTx below are how every query
// of this package reaches the server. A NUL is stored as `\x00` and an
// invalid byte as `\xHH`, as the chat display shows them
// (textutil.Storable); a lookup by such a text maps it the same way, so
// it finds what was stored.

// textPool is the connection pool whose queries, and the queries of the
// transactions it begins, have their text arguments made storable.
type textPool struct{ *pgq.Pool }

// Exec is pgq.Pool.Exec with storable text arguments.
func (p textPool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return p.Pool.Exec(ctx, sql, storableArgs(args)...)
}

// Query is pgq.Pool.Query with storable text arguments.
func (p textPool) Query(ctx context.Context, sql string, args ...any) (pgq.Rows, error) {
	return p.Pool.Query(ctx, sql, storableArgs(args)...)
}

// QueryRow is pgq.Pool.QueryRow with storable text arguments.
func (p textPool) QueryRow(ctx context.Context, sql string, args ...any) pgq.Row {
	return p.Pool.QueryRow(ctx, sql, storableArgs(args)...)
}

// Begin begins a transaction whose queries have storable text arguments
// (pgq.BeginFunc calls it).
func (p textPool) Begin(ctx context.Context) (pgq.Tx, error) {
	tx, err := p.Pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return textTx{tx}, nil
}

// textTx is a transaction whose queries have storable text arguments.
type textTx struct{ pgq.Tx }

// Exec is pgq.Tx.Exec with storable text arguments.
func (t textTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.Tx.Exec(ctx, sql, storableArgs(args)...)
}

// Query is pgq.Tx.Query with storable text arguments.
func (t textTx) Query(ctx context.Context, sql string, args ...any) (pgq.Rows, error) {
	return t.Tx.Query(ctx, sql, storableArgs(args)...)
}

// QueryRow is pgq.Tx.QueryRow with storable text arguments.
func (t textTx) QueryRow(ctx context.Context, sql string, args ...any) pgq.Row {
	return t.Tx.QueryRow(ctx, sql, storableArgs(args)...)
}

// storableArgs returns args with every text made storable: strings (of
// any string type, through a pointer too) and string slices. args itself
// is returned when none needs it, as is the common case.
func storableArgs(args []any) []any {
	var out []any
	for i, a := range args {
		s, ok := storableArg(a)
		if !ok {
			continue
		}
		if out == nil {
			out = slices.Clone(args)
		}
		out[i] = s
	}
	if out == nil {
		return args
	}
	return out
}

// storableArg returns a's storable form and true when a is text Storable
// changes; otherwise nil and false.
func storableArg(a any) (any, bool) {
	switch v := a.(type) {
	case nil, []byte, bool, int, int32, int64, float64:
		return nil, false
	case string:
		if textutil.NeedsStorable(v) {
			return textutil.Storable(v), true
		}
	case *string:
		if v != nil && textutil.NeedsStorable(*v) {
			s := textutil.Storable(*v)
			return &s, true
		}
	case []string:
		if slices.ContainsFunc(v, textutil.NeedsStorable) {
			out := make([]string, len(v))
			for i, s := range v {
				out[i] = textutil.Storable(s)
			}
			return out, true
		}
	default:
		// A named string type (core.Identity, record.Status): sent as
		// its text.
		if rv := reflect.ValueOf(a); rv.Kind() == reflect.String && textutil.NeedsStorable(rv.String()) {
			return textutil.Storable(rv.String()), true
		}
	}
	return nil, false
}
