package pgq

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// Batch is statements sent together in one round trip, run as one
// implicit transaction unless they begin one.
type Batch struct{ items []queued }

type queued struct {
	sql  string
	args []any
}

// Queue adds a statement.
func (b *Batch) Queue(sql string, args ...any) { b.items = append(b.items, queued{sql, args}) }

// Len is the number of statements queued.
func (b *Batch) Len() int { return len(b.items) }

// BatchResults are a batch's results, one per statement in order; Close
// reads what is left and returns the first error.
type BatchResults interface {
	Exec() (pgconn.CommandTag, error)
	Query() (Rows, error)
	QueryRow() Row
	Close() error
}

// SendBatch sends b on the connection.
func (c *Conn) SendBatch(ctx context.Context, b *Batch) BatchResults {
	var pb pgconn.Batch
	for _, q := range b.items {
		s, err := c.prepare(ctx, q.sql)
		if err != nil {
			return &batchResults{err: err}
		}
		values, formats, err := encodeArgs(s.sd.ParamOIDs, q.args)
		if err != nil {
			return &batchResults{err: err}
		}
		pb.ExecStatement(s.sd, values, formats, s.formats)
	}
	return &batchResults{mrr: c.pg.ExecBatch(ctx, &pb)}
}

// SendBatch sends b on a connection of the pool, given back when the
// results are closed.
func (p *Pool) SendBatch(ctx context.Context, b *Batch) BatchResults {
	c, err := p.acquire(ctx)
	if err != nil {
		return &batchResults{err: err}
	}
	br := c.SendBatch(ctx, b).(*batchResults)
	br.done = func() { p.release(c) }
	if br.mrr == nil {
		br.Close() //nolint:errcheck // br.err is returned by each method
	}
	return br
}

type batchResults struct {
	mrr    *pgconn.MultiResultReader
	err    error // the first
	closed bool
	done   func()
}

// next is the next statement's result.
func (b *batchResults) next() (*pgconn.ResultReader, error) {
	if b.err != nil {
		return nil, b.err
	}
	if b.closed {
		return nil, errors.New("pgq: batch results closed")
	}
	if !b.mrr.NextResult() {
		err := b.mrr.Close()
		if err == nil {
			err = errors.New("pgq: no more results in the batch")
		}
		b.err = err
		return nil, err
	}
	return b.mrr.ResultReader(), nil
}

func (b *batchResults) Exec() (pgconn.CommandTag, error) {
	rr, err := b.next()
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := rr.Close()
	if err != nil && b.err == nil {
		b.err = err
	}
	return tag, err
}

func (b *batchResults) Query() (Rows, error) {
	rr, err := b.next()
	if err != nil {
		return nil, err
	}
	return &rows{rr: rr}, nil
}

func (b *batchResults) QueryRow() Row {
	rr, err := b.next()
	if err != nil {
		return row{err: err}
	}
	return row{r: &rows{rr: rr}}
}

func (b *batchResults) Close() error {
	if b.closed {
		return b.err
	}
	b.closed = true
	if b.mrr != nil {
		if err := b.mrr.Close(); err != nil && b.err == nil {
			b.err = err
		}
	}
	if b.done != nil {
		b.done()
		b.done = nil
	}
	return b.err
}
