package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
)

// openReadOnly opens an existing database through query-only connections
// only, after checking that its schema is exactly this build's.
func openReadOnly(ctx context.Context, dsn, path string, o Options) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", path, err)
	}
	r, err := openPool(dsn, readerParams, readConns)
	if err != nil {
		return nil, err
	}
	if err := checkSchema(ctx, r); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	// Writes go to the query-only pool too, where SQLite refuses them.
	return &DB{w: r, r: r, opts: o.withDefaults()}, nil
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
		return fmt.Errorf("sqlite: database schema version %d is older than this gatehouse (%d); run the bot once to upgrade it", v, known)
	}
	return nil
}
