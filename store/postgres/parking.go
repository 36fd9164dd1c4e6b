package postgres

import (
	"context"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// Park stores each body under its id in scope at the store's clock, all in
// one batch (one implicit transaction, one round trip); an id parked
// already keeps its first body. It refuses what store.CheckPark refuses,
// writing nothing.
func (db *DB) Park(ctx context.Context, scope string, updates map[int64][]byte) error {
	if err := store.CheckPark(scope, updates); err != nil {
		return fmt.Errorf("postgres: park %s: %w", scope, err)
	}
	if len(updates) == 0 {
		return nil
	}
	// The batch bypasses textPool: its text is made storable here.
	b := &pgq.Batch{}
	at := nanos(db.now())
	for id, body := range updates {
		if body == nil {
			body = []byte{} // pgq sends a nil slice as NULL
		}
		b.Queue(`INSERT INTO parked_updates (scope, id, body, parked) VALUES ($1, $2, $3, $4)
			ON CONFLICT (scope, id) DO NOTHING`, storableArgs([]any{scope, id, body, at})...)
	}
	err := func() error {
		br := db.pool.SendBatch(ctx, b)
		defer br.Close()
		return br.Close()
	}()
	if err != nil {
		return fmt.Errorf("postgres: park %s: %w", scope, unreachable(ctx, err))
	}
	return nil
}

// Unpark forgets id in scope.
func (db *DB) Unpark(ctx context.Context, scope string, id int64) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM parked_updates WHERE scope = $1 AND id = $2`, scope, id); err != nil {
		return fmt.Errorf("postgres: unpark %s %d: %w", scope, id, unreachable(ctx, err))
	}
	return nil
}

// Parked returns at most limit of scope's parked updates, the lowest ids.
func (db *DB) Parked(ctx context.Context, scope string, limit int) (map[int64][]byte, error) {
	out := make(map[int64][]byte)
	if limit <= 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id, body FROM parked_updates WHERE scope = $1 ORDER BY id LIMIT $2`, scope, int64(limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: parked %s: %w", scope, unreachable(ctx, err))
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			return nil, fmt.Errorf("postgres: parked %s: %w", scope, err)
		}
		out[id] = body
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: parked %s: %w", scope, unreachable(ctx, err))
	}
	return out, nil
}

// pruneParked forgets the updates parked longer than store.ParkedKeep ago.
func (db *DB) pruneParked(ctx context.Context) error {
	cutoff := db.now().Add(-store.ParkedKeep)
	if _, err := db.pool.Exec(ctx, `DELETE FROM parked_updates WHERE parked < $1`, nanos(cutoff)); err != nil {
		return fmt.Errorf("postgres: prune parked updates: %w", err)
	}
	return nil
}
