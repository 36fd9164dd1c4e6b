// Package migrate runs a store driver's embedded schema migrations through
// goose (github.com/pressly/goose/v3). Each driver keeps its own SQL, one
// file a version named NNNN_what.sql with goose's "-- +goose Up"
// annotation, numbered 1, 2, 3, … without gaps; the versions mean the same
// schema in every driver. goose records what it applied in its table,
// goose_db_version.
package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Table is goose's version table.
const Table = goose.DefaultTablename

// Latest returns the newest version among the migrations in fsys (its
// root holds the .sql files) after checking that they number 1, 2, 3, …
// without gaps.
func Latest(fsys fs.FS) (int, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return 0, fmt.Errorf("read migrations: %w", err)
	}
	n := 0
	for _, e := range entries {
		prefix, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(prefix)
		if err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return 0, fmt.Errorf("migration %s: want NNNN_name.sql", e.Name())
		}
		n++
		if v != n { // ReadDir sorts by name, and the names are zero-padded
			return 0, fmt.Errorf("migration %s: want version %d", e.Name(), n)
		}
	}
	return n, nil
}

// Up applies the migrations of fsys that db lacks, each in its own
// transaction, and returns the newest version db then has. With a locker
// (PostgreSQL's advisory lock: NewPostgresLocker), instances that start
// together take turns, so each migration runs once. Up does not check for
// a database newer than fsys: the driver does that first (goose would
// leave it as it is).
func Up(ctx context.Context, dialect goose.Dialect, db *sql.DB, fsys fs.FS, locker lock.SessionLocker) (int, error) {
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true), goose.WithLogger(goose.NopLogger())}
	if locker != nil {
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, db, fsys, opts...)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: version: %w", err)
	}
	return int(v), nil
}

// NewPostgresLocker is goose's session-level advisory lock for PostgreSQL:
// held on one connection while migrations run, retried every second for up
// to 5 minutes while another instance holds it.
func NewPostgresLocker() (lock.SessionLocker, error) {
	l, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, fmt.Errorf("migrate: lock: %w", err)
	}
	return l, nil
}
