package sqlite

import (
	"context"
	"database/sql"

	"github.com/gatehouse-bot/gatehouse/store/internal/migrate"
)

// schemaCurrent reports, in one query that writes nothing, whether the
// database is exactly as migrateSchema would leave it with known the
// newest migration: goose's table has version 0 and every version from 1
// to known applied, nothing newer, no row saying a version was taken back,
// and schema_version has one row saying known. Then the migrations'
// machinery (reading every migration, a transaction rewriting
// schema_version) is skipped: the bot's start waited on it every time
// though it did nothing. Any error, a table missing (a new database, one
// from before goose) included, is false: the full path decides.
func schemaCurrent(ctx context.Context, w *sql.DB, known int) bool {
	var current bool
	err := w.QueryRowContext(ctx, `SELECT
	(SELECT COUNT(*) FROM schema_version) = 1 AND (SELECT MAX(version) FROM schema_version) = ?1
	AND (SELECT MAX(version_id) FROM `+migrate.Table+`) = ?1
	AND (SELECT COUNT(DISTINCT version_id) FROM `+migrate.Table+` WHERE version_id BETWEEN 0 AND ?1) = ?1 + 1
	AND NOT EXISTS (SELECT 1 FROM `+migrate.Table+` WHERE NOT is_applied)`, known).Scan(&current)
	return err == nil && current
}
