package pgq

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrClosedPool is what a closed pool's methods return.
var ErrClosedPool = errors.New("pgq: closed pool")

// Pool is a bounded set of connections, opened as needed. A connection
// given back closed, broken, busy or inside a transaction is dropped; one
// idle past Config.PingIdle is pinged before use and replaced if the
// ping fails. It is safe for concurrent use.
type Pool struct {
	cfg     *Config
	slots   chan struct{} // one per connection in use
	closing chan struct{}
	once    sync.Once
	mu      sync.Mutex
	idle    []*Conn
}

// NewPool is a pool of cfg's connections; it connects only when asked
// for a connection.
func NewPool(cfg *Config) *Pool {
	return &Pool{cfg: cfg, slots: make(chan struct{}, cfg.MaxConns), closing: make(chan struct{})}
}

// Config is the pool's configuration.
func (p *Pool) Config() *Config { return p.cfg }

// Close closes the idle connections and, once each is given back, the
// others; it waits for them. Acquire then fails.
func (p *Pool) Close() {
	p.once.Do(func() {
		close(p.closing)
		for range cap(p.slots) {
			p.slots <- struct{}{}
		}
		p.mu.Lock()
		idle := p.idle
		p.idle = nil
		p.mu.Unlock()
		for _, c := range idle {
			c.closeNow()
		}
	})
}

// acquire takes an idle connection, or connects, once a slot is free.
func (p *Pool) acquire(ctx context.Context) (*Conn, error) {
	select {
	case <-p.closing:
		return nil, ErrClosedPool
	default:
	}
	select {
	case p.slots <- struct{}{}:
	case <-p.closing:
		return nil, ErrClosedPool
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		p.mu.Lock()
		var c *Conn
		if n := len(p.idle); n > 0 {
			c = p.idle[n-1]
			p.idle = p.idle[:n-1]
		}
		p.mu.Unlock()
		if c == nil {
			break
		}
		if p.healthy(ctx, c) {
			return c, nil
		}
		c.closeNow()
	}
	c, err := Connect(ctx, p.cfg)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return c, nil
}

// healthy reports whether the idle c may be used: not too old, not idle
// too long, and answering a ping when idle past PingIdle.
func (p *Pool) healthy(ctx context.Context, c *Conn) bool {
	now := time.Now()
	switch {
	case c.pg.IsClosed(), now.Sub(c.created) > p.cfg.MaxConnLifetime, now.Sub(c.used) > p.cfg.MaxConnIdleTime:
		return false
	case now.Sub(c.used) >= p.cfg.PingIdle:
		return c.pg.Ping(ctx) == nil
	}
	return true
}

// release gives c back: kept when it is idle and healthy, else closed.
func (p *Pool) release(c *Conn) {
	defer func() { <-p.slots }()
	if c.pg.IsClosed() || c.pg.IsBusy() || c.pg.TxStatus() != 'I' {
		c.closeNow()
		return
	}
	select {
	case <-p.closing:
		c.closeNow()
		return
	default:
	}
	c.used = time.Now()
	p.mu.Lock()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// closeNow closes c without waiting for the server.
func (c *Conn) closeNow() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.pg.Close(ctx) // dropped either way
}

// Ping takes a connection and makes a round trip on it.
func (p *Pool) Ping(ctx context.Context) error {
	c, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	defer p.release(c)
	return c.pg.Ping(ctx)
}

// Exec is Conn.Exec on a connection of the pool.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer p.release(c)
	return c.Exec(ctx, sql, args...)
}

// Query is Conn.Query on a connection of the pool, given back when the
// rows are closed.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	r, err := p.query(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// QueryRow is Conn.QueryRow on a connection of the pool.
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) Row {
	r, err := p.query(ctx, sql, args)
	return row{r, err}
}

func (p *Pool) query(ctx context.Context, sql string, args []any) (*rows, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	r, err := c.query(ctx, sql, args)
	if err != nil {
		p.release(c)
		return nil, err
	}
	r.done = func() { p.release(c) }
	return r, nil
}

// Acquire takes a connection of the pool for the caller, who gives it
// back (Release) or takes it out of the pool (Hijack).
func (p *Pool) Acquire(ctx context.Context) (*PoolConn, error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &PoolConn{p: p, c: c}, nil
}

// PoolConn is a connection taken from a pool.
type PoolConn struct {
	p    *Pool
	c    *Conn
	done bool
}

// Conn is the connection.
func (pc *PoolConn) Conn() *Conn { return pc.c }

// Release gives the connection back to its pool (once).
func (pc *PoolConn) Release() {
	if pc.done {
		return
	}
	pc.done = true
	pc.p.release(pc.c)
}

// Hijack takes the connection out of its pool: the caller closes it.
func (pc *PoolConn) Hijack() *Conn {
	if !pc.done {
		pc.done = true
		<-pc.p.slots
	}
	return pc.c
}
