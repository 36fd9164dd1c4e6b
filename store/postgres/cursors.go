package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// Cursor returns the value stored under key, "" when unset.
func (db *DB) Cursor(ctx context.Context, key string) (string, error) {
	var v string
	err := db.pool.QueryRow(ctx, `SELECT value FROM cursors WHERE key = $1`, key).Scan(&v)
	if err != nil && !errors.Is(err, pgq.ErrNoRows) {
		return "", fmt.Errorf("postgres: cursor %q: %w", key, unreachable(ctx, err))
	}
	return v, nil
}

// SetCursor stores value under key, replacing any previous value.
func (db *DB) SetCursor(ctx context.Context, key, value string) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO cursors (key, value, updated) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated`,
		key, value, nanos(db.now()))
	if err != nil {
		return fmt.Errorf("postgres: set cursor %q: %w", key, unreachable(ctx, err))
	}
	return nil
}
