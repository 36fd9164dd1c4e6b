package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/store"
)

// Park stores each body under its id in scope at the store's clock, all in
// one durable transaction (the gateway confirms the updates to its
// platform once it returns); an id parked already keeps its first body.
// It refuses what store.CheckPark refuses, writing nothing.
func (db *DB) Park(ctx context.Context, scope string, updates map[int64][]byte) error {
	if err := store.CheckPark(scope, updates); err != nil {
		return fmt.Errorf("sqlite: park %s: %w", scope, err)
	}
	if len(updates) == 0 {
		return nil
	}
	at := nanos(db.now())
	err := db.inTx(ctx, "park", durable, func(tx *sql.Tx) error {
		for id, body := range updates {
			if body == nil {
				body = []byte{} // a nil slice binds as NULL
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO parked_updates (scope, id, body, parked) VALUES (?, ?, ?, ?)
				ON CONFLICT (scope, id) DO NOTHING`, scope, id, body, at); err != nil {
				return fmt.Errorf("update %d: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: park %s: %w", scope, err)
	}
	return nil
}

// Unpark forgets id in scope.
func (db *DB) Unpark(ctx context.Context, scope string, id int64) error {
	if _, err := db.exec(ctx, `DELETE FROM parked_updates WHERE scope = ? AND id = ?`, scope, id); err != nil {
		return fmt.Errorf("sqlite: unpark %s %d: %w", scope, id, err)
	}
	return nil
}

// Parked returns at most limit of scope's parked updates, the lowest ids.
func (db *DB) Parked(ctx context.Context, scope string, limit int) (map[int64][]byte, error) {
	out := make(map[int64][]byte)
	if limit <= 0 {
		return out, nil
	}
	rows, err := db.query(ctx, `SELECT id, body FROM parked_updates WHERE scope = ? ORDER BY id LIMIT ?`, scope, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: parked %s: %w", scope, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			return nil, fmt.Errorf("sqlite: parked %s: %w", scope, err)
		}
		out[id] = body
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: parked %s: %w", scope, err)
	}
	return out, nil
}

// pruneParked forgets the updates parked longer than store.ParkedKeep ago.
func (db *DB) pruneParked(ctx context.Context) error {
	cutoff := db.now().Add(-store.ParkedKeep)
	if _, err := db.w.ExecContext(ctx, `DELETE FROM parked_updates WHERE parked < ?`, nanos(cutoff)); err != nil {
		return fmt.Errorf("sqlite: prune parked updates: %w", err)
	}
	return nil
}
