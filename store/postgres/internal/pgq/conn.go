package pgq

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// maxStatements bounds the statements a connection keeps prepared: past
// it, one is deallocated for each new one. The store has far fewer.
const maxStatements = 512

// maxNotes bounds the notifications a connection keeps until
// WaitForNotification takes them: past it the oldest is dropped.
const maxNotes = 1024

// noteKey is where a PgConn's CustomData points to its Conn, for deliver.
const noteKey = "pgq.conn"

// Conn is one connection. It is not safe for concurrent use.
type Conn struct {
	pg      *pgconn.PgConn
	stmts   map[string]*stmt
	seq     uint64
	created time.Time
	used    time.Time // when it was last given back to its pool
	notes   []*pgconn.Notification
}

// stmt is a prepared statement and the formats its results are asked in.
type stmt struct {
	sd      *pgconn.StatementDescription
	formats []int16
}

// Connect opens a connection with cfg's settings.
func Connect(ctx context.Context, cfg *Config) (*Conn, error) {
	pg, err := pgconn.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	c := &Conn{pg: pg, stmts: map[string]*stmt{}, created: now, used: now}
	pg.CustomData()[noteKey] = c
	return c, nil
}

// deliver keeps a notification for its connection's WaitForNotification.
func deliver(pg *pgconn.PgConn, n *pgconn.Notification) {
	c, ok := pg.CustomData()[noteKey].(*Conn)
	if !ok {
		return
	}
	if len(c.notes) >= maxNotes {
		c.notes = c.notes[1:]
	}
	c.notes = append(c.notes, n)
}

// PgConn is the underlying connection.
func (c *Conn) PgConn() *pgconn.PgConn { return c.pg }

// Close closes the connection.
func (c *Conn) Close(ctx context.Context) error { return c.pg.Close(ctx) }

// IsClosed reports whether the connection is closed (or broken).
func (c *Conn) IsClosed() bool { return c.pg.IsClosed() }

// WaitForNotification returns the next notification on a connection that
// listens (LISTEN), waiting for one until ctx ends.
func (c *Conn) WaitForNotification(ctx context.Context) (*pgconn.Notification, error) {
	for len(c.notes) == 0 {
		if err := c.pg.WaitForNotification(ctx); err != nil {
			return nil, err
		}
	}
	n := c.notes[0]
	c.notes = c.notes[1:]
	return n, nil
}

// Exec runs sql: with no arguments in the simple protocol (sql may then
// be several statements; the command tag is the last one's), otherwise
// as a prepared statement.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if len(args) == 0 {
		mrr := c.pg.Exec(ctx, sql)
		var tag pgconn.CommandTag
		for mrr.NextResult() {
			tag, _ = mrr.ResultReader().Close()
		}
		return tag, mrr.Close()
	}
	r, err := c.query(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	r.Close()
	return r.tag, r.err
}

// Query runs sql as a prepared statement and returns its rows, which the
// caller closes (Next closes them after the last row).
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	r, err := c.query(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// QueryRow is Query for one row, read by the returned Row's Scan:
// ErrNoRows when there is none.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) Row {
	r, err := c.query(ctx, sql, args)
	return row{r, err}
}

func (c *Conn) query(ctx context.Context, sql string, args []any) (*rows, error) {
	s, err := c.prepare(ctx, sql)
	if err != nil {
		return nil, err
	}
	values, formats, err := encodeArgs(s.sd.ParamOIDs, args)
	if err != nil {
		return nil, err
	}
	rr := c.pg.ExecStatement(ctx, s.sd, values, formats, s.formats)
	return &rows{c: c, sql: sql, rr: rr}, nil
}

// prepare returns sql's prepared statement, preparing it (one round trip)
// the first time.
func (c *Conn) prepare(ctx context.Context, sql string) (*stmt, error) {
	if s, ok := c.stmts[sql]; ok {
		return s, nil
	}
	if len(c.stmts) >= maxStatements {
		for old, s := range c.stmts {
			if err := c.pg.Deallocate(ctx, s.sd.Name); err != nil {
				return nil, err
			}
			delete(c.stmts, old)
			break
		}
	}
	c.seq++
	sd, err := c.pg.Prepare(ctx, "pgq_"+strconv.FormatUint(c.seq, 10), sql, nil)
	if err != nil {
		if pe, ok := errors.AsType[*pgconn.PrepareError](err); ok && !pe.ParseComplete {
			if inner := errors.Unwrap(pe); inner != nil {
				return nil, inner // the server's error, as pgx returns it
			}
		}
		return nil, err
	}
	s := &stmt{sd: sd, formats: resultFormats(sd.Fields)}
	c.stmts[sql] = s
	return s, nil
}

// forget drops sql's prepared statement after err when err says the
// server no longer has it or its result changed (a schema change: the
// next use prepares it again).
func (c *Conn) forget(sql string, err error) {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && (pe.Code == "0A000" || pe.Code == "26000") {
		delete(c.stmts, sql)
	}
}
