package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// ErrSchemaTooNew matches (errors.Is) the error Open returns for a database
// written by a newer gatehouse; the database is left untouched. The caller
// tells the user to upgrade gatehouse.
var ErrSchemaTooNew = errors.New("database schema is newer than this gatehouse")

// SchemaTooNewError is the error Open returns for a database whose schema
// version is newer than this build's; it matches ErrSchemaTooNew.
type SchemaTooNewError struct {
	Database int // the database's schema version
	Known    int // the newest version this build knows
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this gatehouse (%d); upgrade gatehouse",
		e.Database, e.Known)
}

// Is makes errors.Is(err, ErrSchemaTooNew) true.
func (e *SchemaTooNewError) Is(target error) bool { return target == ErrSchemaTooNew }

// migration is one embedded schema step; version n takes the schema from
// n-1 to n.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the embedded migrations, named NNNN_what.sql, in
// version order, and checks that they number 1, 2, 3, … without gaps.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("sqlite: read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		prefix, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(prefix)
		if err != nil {
			return nil, fmt.Errorf("sqlite: migration %s: want NNNN_name.sql", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("sqlite: read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("sqlite: migration %s: want version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the schema version this build writes (0 only if the
// embedded migrations are malformed, which the tests rule out).
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrate brings the schema up to date in one transaction, or refuses a
// database whose schema is newer than the migrations this build knows.
func migrate(ctx context.Context, w *sql.DB) (err error) {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: migrate: begin: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, rollback(tx))
		}
	}()
	current, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if current > len(ms) {
		return fmt.Errorf("sqlite: %w", &SchemaTooNewError{Database: current, Known: len(ms)})
	}
	for _, m := range ms[current:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
	}
	if err := setSchemaVersion(ctx, tx, len(ms)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: migrate: commit: %w", err)
	}
	return nil
}

// schemaVersion reads the schema version, 0 for a new database.
func schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	const create = `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return 0, fmt.Errorf("sqlite: schema version: %w", err)
	}
	var v int
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("sqlite: schema version: %w", err)
	}
	return v, nil
}

func setSchemaVersion(ctx context.Context, tx *sql.Tx, v int) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
		return fmt.Errorf("sqlite: set schema version: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, v); err != nil {
		return fmt.Errorf("sqlite: set schema version: %w", err)
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
