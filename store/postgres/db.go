// Package postgres is the store on a PostgreSQL database through pgx's
// wire client, github.com/jackc/pgx/v5/pgconn (a pool of its connections:
// internal/pgq). It keeps what store/sqlite keeps, in the same schema
// versions, and is shared: several instances may run on one database
// (store.Sharer), coordinating through leases, schedule slots and
// heartbeats in it.
//
// Every write is one statement or one transaction, committed as the
// server commits (synchronous_commit as configured there): a claimed
// approval stays claimed. The exactly-once point, ClaimApproval, is one
// conditional UPDATE, so it holds across connections and processes.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// DefaultHistory is how many messages Load returns when Options.History
// is 0.
const DefaultHistory = 40

// connectTimeout bounds one connection attempt when the DSN sets none.
const connectTimeout = 10 * time.Second

// Options tune a DB; zero fields take the defaults.
type Options struct {
	// History is how many of a conversation's newest messages Load returns
	// (before llm.Trim); 0 means DefaultHistory.
	History int
	// Retention is how long conversation history is kept before Prune
	// deletes it; 0 keeps it for ever.
	Retention time.Duration
	// MemoryMax is how many remembered keys a scope keeps (Prune forgets
	// the oldest past it); 0 means store.MemoryMax.
	MemoryMax int
	// Now is the clock for stored timestamps and pruning; nil means time.Now.
	Now func() time.Time
	// ReadOnly opens an existing database for reading only (`bot audit`,
	// `bot doctor`): every connection has default_transaction_read_only
	// on, nothing is migrated or pruned, and the schema version must be
	// this build's.
	ReadOnly bool
	// PruneLater leaves out Open's prune: the caller prunes (Prune) once
	// its start-up is done, as the bot does in the background after its
	// first receive.
	PruneLater bool
}

func (o Options) withDefaults() Options {
	if o.History <= 0 {
		o.History = DefaultHistory
	}
	if o.Retention < 0 {
		o.Retention = 0
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MemoryMax <= 0 {
		o.MemoryMax = store.MemoryMax
	}
	return o
}

// DB is an open PostgreSQL store. It is safe for concurrent use.
type DB struct {
	pool textPool // every text argument made storable (text.go)
	opts Options
	// serverClock is true when Options.Now was not given: send slots
	// (ReserveSend) are then reserved on the server's clock, which all
	// instances share whatever their hosts' clocks say.
	serverClock bool
}

var (
	_ store.Store  = (*DB)(nil)
	_ store.Server = (*DB)(nil)
	_ store.Sharer = (*DB)(nil)
)

// Open connects to the database dsn names (a postgres:// URL or key=value
// DSN), applies pending schema migrations under an advisory lock and
// prunes old history (unless o.ReadOnly, or o.PruneLater). A DSN that does not parse gives
// a *DSNError; a server that cannot be reached or refuses the login, an
// error naming its host and port, never the password. A database written
// by a newer gatehouse is refused with store.ErrSchemaTooNew and left
// untouched.
//
// Several instances may open one database at once (Shared): nothing here
// locks it for one.
func Open(ctx context.Context, dsn string, o Options) (*DB, error) {
	pc, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		// A server that does not answer (a host down, a dropped packet)
		// is reported, not waited for: connect_timeout in the DSN sets
		// another bound.
		pc.ConnConfig.ConnectTimeout = connectTimeout
	}
	if o.ReadOnly {
		pc.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	where := whereConfig(pc)
	db := &DB{pool: textPool{pgq.NewPool(pc)}, opts: o.withDefaults(), serverClock: o.Now == nil}
	if err := db.pool.Ping(ctx); err != nil {
		return nil, errors.Join(connectError(where, err), db.Close())
	}
	if o.ReadOnly {
		if err := db.checkSchema(ctx); err != nil {
			return nil, errors.Join(err, db.Close())
		}
		return db, nil
	}
	if err := db.migrate(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if o.PruneLater {
		return db, nil
	}
	if _, err := db.Prune(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

// Close closes the connection pool.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// Shared reports true: any number of instances may run on one PostgreSQL
// database; receivers the platform allows once per token run under a lease.
func (db *DB) Shared() bool { return true }

func (db *DB) now() time.Time { return db.opts.Now() }

// ServerVersion is "PostgreSQL" and the server's version (server_version,
// e.g. "15.18 (Debian 15.18-0+deb12u1)").
func (db *DB) ServerVersion(ctx context.Context) (string, error) {
	var v string
	if err := db.pool.QueryRow(ctx, `SHOW server_version`).Scan(&v); err != nil {
		return "", fmt.Errorf("postgres: server version: %w", err)
	}
	return "PostgreSQL " + v, nil
}

// nanos stores t as Unix nanoseconds; the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos reverses nanos, in UTC.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
