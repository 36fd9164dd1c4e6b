package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Cursor returns the value stored under key, "" when unset.
func (db *DB) Cursor(ctx context.Context, key string) (string, error) {
	var v string
	err := db.queryRow(ctx, `SELECT value FROM cursors WHERE key = ?`, key).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("sqlite: cursor %q: %w", key, err)
	}
	return v, nil
}

// SetCursor stores value under key, replacing any previous value.
func (db *DB) SetCursor(ctx context.Context, key, value string) error {
	_, err := db.exec(ctx, `INSERT INTO cursors (key, value, updated) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated`,
		key, value, nanos(db.now()))
	if err != nil {
		return fmt.Errorf("sqlite: set cursor %q: %w", key, err)
	}
	return nil
}
