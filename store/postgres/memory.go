package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// checkMemoryKey refuses an empty scope or key, or one longer than
// store.MaxMemoryKey bytes.
func checkMemoryKey(scope, key string) error {
	if scope == "" || key == "" || len(scope) > store.MaxMemoryKey || len(key) > store.MaxMemoryKey {
		return fmt.Errorf("want a scope and a key of 1 to %d bytes, got %d and %d", store.MaxMemoryKey, len(scope), len(key))
	}
	return nil
}

// Remember records key in scope, or renews it, at the store's clock.
func (db *DB) Remember(ctx context.Context, scope, key string) error {
	if err := checkMemoryKey(scope, key); err != nil {
		return fmt.Errorf("postgres: remember: %w", err)
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO remembered (scope, key, at) VALUES ($1, $2, $3)
		ON CONFLICT (scope, key) DO UPDATE SET at = excluded.at`, scope, key, nanos(db.now()))
	if err != nil {
		return fmt.Errorf("postgres: remember in %q: %w", scope, err)
	}
	return nil
}

// Remembered reports whether key is remembered in scope.
func (db *DB) Remembered(ctx context.Context, scope, key string) (bool, error) {
	var one int
	err := db.pool.QueryRow(ctx, `SELECT 1 FROM remembered WHERE scope = $1 AND key = $2`, scope, key).Scan(&one)
	switch {
	case errors.Is(err, pgq.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("postgres: remembered in %q: %w", scope, err)
	}
	return true, nil
}

// pruneMemory forgets the keys not renewed within store.MemoryKeep, then
// the oldest of each scope past Options.MemoryMax.
func (db *DB) pruneMemory(ctx context.Context) error {
	cutoff := db.now().Add(-store.MemoryKeep)
	if _, err := db.pool.Exec(ctx, `DELETE FROM remembered WHERE at < $1`, nanos(cutoff)); err != nil {
		return fmt.Errorf("postgres: prune memory: %w", err)
	}
	_, err := db.pool.Exec(ctx, `DELETE FROM remembered WHERE (scope, key) IN (
		SELECT scope, key FROM (
			SELECT scope, key, ROW_NUMBER() OVER (PARTITION BY scope ORDER BY at DESC, key DESC) AS n
			FROM remembered
		) ranked WHERE n > $1
	)`, int64(db.opts.MemoryMax))
	if err != nil {
		return fmt.Errorf("postgres: prune memory: %w", err)
	}
	return nil
}
