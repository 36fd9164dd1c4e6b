// Package pgq is the little of a PostgreSQL client the store uses, on
// github.com/jackc/pgx/v5/pgconn (the wire protocol) alone: a bounded
// pool of connections, statements with arguments and rows, transactions,
// batches (one round trip, one implicit transaction) and notifications.
// Its names follow pgx's (Pool, Tx, Rows, CollectRows, ErrNoRows, …), and
// so do its semantics where the store relies on them; pgx's type system
// (pgtype), which this replaces with the few Go types the store passes and
// scans, is most of pgx's weight in a binary.
//
// Each connection prepares a statement once (a cache keyed by its SQL, of
// at most maxStatements) and then only binds and executes it. Arguments go
// as text (the server infers each parameter's type), []byte to a bytea
// parameter in binary; results come as text but for bytea, integers,
// booleans and floats, which come in binary.
package pgq

import (
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Config is a parsed connection string: the connection's settings and the
// pool's.
type Config struct {
	// ConnConfig is the settings of each connection.
	ConnConfig *pgconn.Config
	// MaxConns bounds the connections open at once (pool_max_conns;
	// default the larger of 4 and the number of CPUs, as pgxpool's).
	MaxConns int
	// MaxConnLifetime is how long a connection is used before it is
	// replaced (pool_max_conn_lifetime; default an hour).
	MaxConnLifetime time.Duration
	// MaxConnIdleTime is how long a connection may stay idle before it is
	// closed rather than used (pool_max_conn_idle_time; default 30 minutes).
	MaxConnIdleTime time.Duration
	// PingIdle is how long a connection may stay idle before it is pinged
	// (one round trip) when taken from the pool, so that one the server
	// closed meanwhile is replaced rather than used (default a second, as
	// pgxpool's; 0 pings every time).
	PingIdle time.Duration
}

// ParseConfig parses a postgres:// URL or key=value connection string
// with pgconn's parser. The pool_* parameters pgxpool reads, and the
// statement-cache ones pgx reads, are taken out of it (they are not the
// server's): pool_max_conns, pool_max_conn_lifetime and
// pool_max_conn_idle_time set the pool; the others are checked and
// otherwise ignored.
func ParseConfig(dsn string) (*Config, error) {
	cc, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cc.OnNotification = deliver
	c := &Config{
		ConnConfig:      cc,
		MaxConns:        max(4, runtime.NumCPU()),
		MaxConnLifetime: time.Hour,
		MaxConnIdleTime: 30 * time.Minute,
		PingIdle:        time.Second,
	}
	take := func(key string) (string, bool) {
		s, ok := cc.RuntimeParams[key]
		delete(cc.RuntimeParams, key)
		return s, ok
	}
	if s, ok := take("pool_max_conns"); ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, pgconn.NewParseConfigError(dsn, "cannot parse pool_max_conns", err)
		}
		if n < 1 {
			return nil, pgconn.NewParseConfigError(dsn, "pool_max_conns too small", nil)
		}
		c.MaxConns = int(n)
	}
	for _, key := range []string{"pool_min_conns", "pool_min_idle_conns", "statement_cache_capacity", "description_cache_capacity"} {
		if s, ok := take(key); ok {
			if _, err := strconv.ParseInt(s, 10, 32); err != nil {
				return nil, pgconn.NewParseConfigError(dsn, "cannot parse "+key, err)
			}
		}
	}
	durations := map[string]*time.Duration{
		"pool_max_conn_lifetime": &c.MaxConnLifetime, "pool_max_conn_idle_time": &c.MaxConnIdleTime,
		"pool_health_check_period": nil, "pool_max_conn_lifetime_jitter": nil, "pool_ping_timeout": nil,
	}
	for key, to := range durations {
		if s, ok := take(key); ok {
			d, err := time.ParseDuration(s)
			if err != nil {
				return nil, pgconn.NewParseConfigError(dsn, "cannot parse "+key, err)
			}
			if to != nil {
				*to = d
			}
		}
	}
	if s, ok := take("default_query_exec_mode"); ok {
		switch s {
		case "cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol":
		default:
			return nil, pgconn.NewParseConfigError(dsn, "invalid default_query_exec_mode", fmt.Errorf("unknown value %q", s))
		}
	}
	return c, nil
}
