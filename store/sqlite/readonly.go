package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	sqlitedriver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/gatehouse-bot/gatehouse/store"
)

// openReadOnly opens an existing database through query-only connections
// only, after checking that its schema is exactly this build's.
func openReadOnly(ctx context.Context, dsn, path string, o Options) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", path, err)
	}
	r, err := openChecked(ctx, dsn)
	if isReadOnlyDirectory(err) {
		// SQLite reads a WAL database through a -shm file beside it,
		// which it could not create: the directory is not writable by
		// this user (a read-only mount, another user's directory). No WAL
		// file there means no bot writes it (a bot could not create its
		// WAL either) and everything is in the database file, which
		// SQLite then reads as immutable, without a -shm.
		if _, werr := os.Lstat(path + "-wal"); !errors.Is(werr, fs.ErrNotExist) {
			return nil, fmt.Errorf("sqlite: open %s read-only: its directory is not writable by this user and a WAL file lies beside it, which SQLite cannot read without creating %s-shm: %w", path, path, err)
		}
		r, err = openChecked(ctx, immutableDSN(dsn, path))
	}
	if err != nil {
		return nil, err
	}
	// Writes go to the query-only pool too, where SQLite refuses them.
	return &DB{w: r, r: r, opts: o.withDefaults()}, nil
}

// openChecked opens the query-only pool on dsn and checks its schema.
func openChecked(ctx context.Context, dsn string) (*sql.DB, error) {
	r, err := openPool(dsn, readerParams, readConns)
	if err != nil {
		return nil, err
	}
	if err := checkSchema(ctx, r); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return r, nil
}

// isReadOnlyDirectory reports whether err is SQLite's "the directory of a
// WAL database is not writable" (SQLITE_READONLY_DIRECTORY).
func isReadOnlyDirectory(err error) bool {
	var e *sqlitedriver.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_READONLY_DIRECTORY
}

// immutableDSN is dsn as a "file:" URI that opens the file read-only and
// immutable: SQLite takes no locks and needs no -shm. The driver passes
// SQLite's own URI parameters on only in that form.
func immutableDSN(dsn, path string) string {
	_, query, _ := strings.Cut(dsn, "?")
	q, _ := url.ParseQuery(query) // filePath parsed it
	q.Set("mode", "ro")
	q.Set("immutable", "1")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// checkSchema fails unless the database's schema version is this build's.
func checkSchema(ctx context.Context, r *sql.DB) error {
	var v int
	err := r.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v)
	if err != nil {
		return fmt.Errorf("sqlite: not a gatehouse database: %w", err)
	}
	known := SchemaVersion()
	switch {
	case v > known:
		return fmt.Errorf("sqlite: %w", &SchemaTooNewError{Database: v, Known: known})
	case v < known:
		return fmt.Errorf("sqlite: %w", &store.SchemaOldError{Database: v, Known: known})
	}
	return nil
}
