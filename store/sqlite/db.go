// Package sqlite is the embedded default store: one SQLite file through the
// pure-Go driver modernc.org/sqlite, so the binary stays cgo-free.
//
// The file is created with mode 0600 and runs in WAL mode. Every commit
// survives a crash of the process; approvals, standing allows and the audit
// log commit with synchronous=FULL so they also survive a power loss (a
// claimed approval stays claimed: an approved action never runs twice),
// while history, usage and cursors use synchronous=NORMAL, which is several
// times cheaper per message. Writes go through one connection (one writer,
// BEGIN IMMEDIATE); single statements that wait while another commits
// share the next commit (group commit, group.go), each still committed
// before it returns. Reads use a small pool of query-only connections.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/gatehouse-bot/gatehouse/internal/startup"
	"github.com/gatehouse-bot/gatehouse/store"
)

// Defaults for Options' zero fields.
const (
	DefaultHistory = 40
	busyTimeoutMS  = 5000
	readConns      = 4
)

// Options tune a DB; zero fields take the defaults.
type Options struct {
	// History is how many of a conversation's newest messages Load returns
	// (before llm.Trim); 0 means DefaultHistory.
	History int
	// Retention is how long conversation history is kept before Prune
	// deletes it; 0 keeps it for ever (Prune deletes nothing). The audit
	// log is append-only and never pruned.
	Retention time.Duration
	// MemoryMax is how many remembered keys a scope keeps (Prune forgets
	// the oldest past it); 0 means store.MemoryMax.
	MemoryMax int
	// Now is the clock for stored timestamps and pruning; nil means time.Now.
	Now func() time.Time
	// ReadOnly opens an existing database for reading only (`bot audit`,
	// `bot doctor`): nothing is created, migrated or pruned, and every write
	// fails. Its schema version must be this build's.
	ReadOnly bool
	// PruneLater leaves out Open's prune: the caller prunes (Prune) once
	// its start-up is done, as the bot does in the background after its
	// first receive.
	PruneLater bool

	noLock bool // tests only (export_test.go): open past the lock
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

// DB is an open SQLite store. It is safe for concurrent use.
type DB struct {
	w    *sql.DB  // the one writer connection
	r    *sql.DB  // query-only read pool
	lock *os.File // the held lock file; nil when read-only
	opts Options

	stmts stmtCache   // the per-message path's prepared statements
	group groupCommit // folds the writer's single statements (exec)
}

var _ store.Store = (*DB)(nil)

// Open opens (creating it if missing) the database at dsn, a file path or a
// "file:" URI, applies pending schema migrations and prunes old history
// (unless o.ReadOnly, or o.PruneLater). A database written by a newer gatehouse is refused
// with ErrSchemaTooNew and left untouched.
//
// Unless o.ReadOnly, Open first takes an exclusive lock on the database (a
// flock on the file path+".lock"), held until Close: a database another
// process holds open is refused with ErrLocked before anything reads or
// writes it. A read-only DB takes no lock.
func Open(ctx context.Context, dsn string, o Options) (*DB, error) {
	path, err := filePath(dsn)
	if err != nil {
		return nil, err
	}
	if o.ReadOnly {
		return openReadOnly(ctx, dsn, path, o)
	}
	db := &DB{opts: o.withDefaults()}
	if !o.noLock {
		if db.lock, err = acquireLock(path); err != nil {
			return nil, err
		}
	}
	if err := ensureFile(path); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if db.w, err = openPool(dsn, writerParams, 1); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	startup.Mark(ctx, "store: lock, file, writer")
	if err := db.setUp(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	startup.Mark(ctx, "store: schema version, WAL")
	if db.r, err = openPool(dsn, readerParams, readConns); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if o.PruneLater {
		return db, nil
	}
	if _, err := db.Prune(ctx); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	startup.Mark(ctx, "store: prune")
	return db, nil
}

// setUp migrates the schema, then switches to WAL. The order matters: a
// database refused for being too new must not even have its journal mode
// changed.
func (db *DB) setUp(ctx context.Context) error {
	if err := migrateSchema(ctx, db.w); err != nil {
		return err
	}
	var mode string
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: set WAL mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("sqlite: set WAL mode: journal mode is %q", mode)
	}
	return nil
}

// Close closes both connection pools, then releases the lock.
func (db *DB) Close() error {
	errs := []error{db.stmts.close()}
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil && db.w != db.r {
		errs = append(errs, db.w.Close())
	}
	if db.lock != nil {
		// Closing the file releases the flock. The lock file stays: removing
		// it would race with the next instance locking it.
		errs = append(errs, db.lock.Close())
		db.lock = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

func (db *DB) now() time.Time { return db.opts.Now() }
