package postgres

import (
	"context"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/store"
)

// pairingChannel is the LISTEN/NOTIFY channel on which Pair and Unpair
// tell the instances, as they commit, that the paired set changed.
const pairingChannel = "gatehouse_pairing"

var _ store.PairingWatcher = (*DB)(nil)

// WatchPairings listens on its own connection (taken from the pool and
// closed at the end, never given back listening), calls changed once it
// listens and then at each notification, until ctx ends (nil) or the
// connection fails.
func (db *DB) WatchPairings(ctx context.Context, changed func()) error {
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: watch pairings: %w", err)
	}
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection is dropped either way
	if _, err := conn.Exec(ctx, `LISTEN `+pairingChannel); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("postgres: watch pairings: %w", err)
	}
	changed() // what changed before it listened
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("postgres: watch pairings: %w", err)
		}
		changed()
	}
}
