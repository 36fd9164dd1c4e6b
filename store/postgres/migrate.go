package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations is the migrations directory's contents.
var migrations, _ = fs.Sub(migrationFS, "migrations")

// SchemaVersion is the schema version this build writes (0 only if the
// embedded migrations are malformed, which the tests rule out).
func SchemaVersion() int {
	n, err := migrate.Latest(migrations)
	if err != nil {
		return 0
	}
	return n
}

// migrate refuses a database newer than this build, then brings the
// schema up to date (migrate.Up), under goose's advisory lock so that
// instances starting together migrate once, and checks the version again
// (an instance that migrated meanwhile may be newer).
func (db *DB) migrate(ctx context.Context) error {
	known, err := migrate.Latest(migrations)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	current, _, err := db.schemaVersion(ctx)
	if err != nil {
		return err
	}
	if current > known {
		return fmt.Errorf("postgres: %w", &store.SchemaTooNewError{Database: current, Known: known})
	}
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	v, err := migrate.UpConn(ctx, migrate.Postgres, migrateConn{pc.Conn()}, migrations, migrate.NewPostgresLocker())
	if err != nil {
		// Its session may still hold the migrations' lock: closed, not
		// given back.
		pc.Hijack().Close(context.WithoutCancel(ctx)) //nolint:errcheck // dropped either way
		return fmt.Errorf("postgres: %w", err)
	}
	pc.Release()
	if v > known {
		return fmt.Errorf("postgres: %w", &store.SchemaTooNewError{Database: v, Known: known})
	}
	return nil
}

// schemaVersion reads the newest version in goose's table, and whether
// the table exists (0, false for a database gatehouse never used).
func (db *DB) schemaVersion(ctx context.Context) (int, bool, error) {
	var exists bool
	err := db.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, migrate.Table).Scan(&exists)
	if err != nil {
		return 0, false, fmt.Errorf("postgres: schema version: %w", err)
	}
	if !exists {
		return 0, false, nil
	}
	var v int
	err = db.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM "`+migrate.Table+`"`+
		` WHERE is_applied`).Scan(&v)
	if err != nil {
		return 0, false, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, true, nil
}

// checkSchema fails unless the database's schema version is this build's:
// store.ErrNotCreated when gatehouse never used it.
func (db *DB) checkSchema(ctx context.Context) error {
	v, exists, err := db.schemaVersion(ctx)
	if err != nil {
		return err
	}
	known := SchemaVersion()
	switch {
	case !exists:
		return fmt.Errorf("postgres: %w", store.ErrNotCreated)
	case v > known:
		return fmt.Errorf("postgres: %w", &store.SchemaTooNewError{Database: v, Known: known})
	case v < known:
		return fmt.Errorf("postgres: %w", &store.SchemaOldError{Database: v, Known: known})
	}
	return nil
}
