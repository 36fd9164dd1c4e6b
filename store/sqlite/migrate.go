package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations is the migrations directory's contents.
var migrations, _ = fs.Sub(migrationFS, "migrations")

// ErrSchemaTooNew matches (errors.Is) the error Open returns for a database
// written by a newer gatehouse; the database is left untouched.
var ErrSchemaTooNew = store.ErrSchemaTooNew

// SchemaTooNewError is the error Open returns for a database whose schema
// version is newer than this build's; it matches ErrSchemaTooNew.
type SchemaTooNewError = store.SchemaTooNewError

// SchemaVersion is the schema version this build writes (0 only if the
// embedded migrations are malformed, which the tests rule out).
func SchemaVersion() int {
	n, err := migrate.Latest(migrations)
	if err != nil {
		return 0
	}
	return n
}

// The schema's version lives in two tables. goose's own (migrate.Table)
// records the migrations applied; schema_version, one row, is the version
// every gatehouse reads, those from before goose included: they created it
// and refuse a database whose version there is newer than theirs, so the
// bot keeps it equal to goose's. A database without goose's table was
// migrated by the runner before goose, which applied migrations 1 to
// schema_version's version: goose's table is created saying so, and
// migrate.Up applies the rest.

// migrateSchema brings the schema up to date (migrate.Up), or refuses a
// database whose schema is newer than the migrations this build knows
// before writing anything to it.
func migrateSchema(ctx context.Context, w *sql.DB) error {
	known, err := migrateLatest()
	if err != nil {
		return err
	}
	if schemaCurrent(ctx, w, known) {
		return nil
	}
	current, adopted, err := databaseVersion(ctx, w)
	if err != nil {
		return err
	}
	if current > known {
		return fmt.Errorf("sqlite: %w", &SchemaTooNewError{Database: current, Known: known})
	}
	if current > 0 && !adopted {
		if err := adopt(ctx, w, current); err != nil {
			return err
		}
	}
	v, err := migrate.Up(ctx, migrate.SQLite, w, migrations, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if v > known {
		return fmt.Errorf("sqlite: %w", &SchemaTooNewError{Database: v, Known: known})
	}
	return setSchemaVersion(ctx, w, v)
}

func migrateLatest() (int, error) {
	n, err := migrate.Latest(migrations)
	if err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	return n, nil
}

// databaseVersion reads the database's schema version, the greater of
// schema_version's and goose's (0 for a new database), and whether goose's
// table exists. It writes nothing.
func databaseVersion(ctx context.Context, q querier) (version int, gooseTable bool, err error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)`,
		"schema_version", migrate.Table)
	if err != nil {
		return 0, false, fmt.Errorf("sqlite: schema version: %w", err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return 0, false, errors.Join(fmt.Errorf("sqlite: schema version: %w", err), rows.Close())
		}
		tables = append(tables, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, false, fmt.Errorf("sqlite: schema version: %w", err)
	}
	for _, table := range tables {
		col := "version"
		if table == migrate.Table {
			gooseTable, col = true, "version_id"
		}
		var v int
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(`+col+`), 0) FROM `+table).Scan(&v); err != nil {
			return 0, false, fmt.Errorf("sqlite: schema version: %w", err)
		}
		version = max(version, v)
	}
	return version, gooseTable, nil
}

// adopt creates goose's table for a database the runner before goose
// migrated to version, recording versions 0 to version as applied.
func adopt(ctx context.Context, w *sql.DB, version int) (err error) {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: adopt schema version %d: %w", version, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, rollback(tx))
		}
	}()
	if err := migrate.CreateTable(ctx, migrate.SQLite, tx); err != nil {
		return fmt.Errorf("sqlite: adopt schema version %d: %w", version, err)
	}
	for v := range version + 1 {
		if err := migrate.Record(ctx, migrate.SQLite, tx, v); err != nil {
			return fmt.Errorf("sqlite: adopt schema version %d: %w", version, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: adopt schema version %d: commit: %w", version, err)
	}
	return nil
}

// setSchemaVersion makes schema_version say v.
func setSchemaVersion(ctx context.Context, w *sql.DB, v int) (err error) {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: set schema version: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, rollback(tx))
		}
	}()
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`,
		`DELETE FROM schema_version`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("sqlite: set schema version: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, v); err != nil {
		return fmt.Errorf("sqlite: set schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: set schema version: commit: %w", err)
	}
	return nil
}

// rollback rolls tx back, ignoring "already done".
func rollback(tx *sql.Tx) error {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("sqlite: rollback: %w", err)
	}
	return nil
}
