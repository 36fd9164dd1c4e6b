package sqlite

import (
	"context"
	"fmt"
)

// Prune deletes history messages older than Options.Retention and returns
// how many it removed; with Retention 0 it deletes no history. Whatever
// the retention, it forgets the remembered keys past store.MemoryKeep or
// Options.MemoryMax, schedule slots past store.SlotKeep, instances not
// seen for store.InstanceKeep and updates parked longer than
// store.ParkedKeep ago (none of them counted). The audit log
// (append-only), approvals, usage and cursors are always kept. Open calls
// it; the bot calls it daily.
func (db *DB) Prune(ctx context.Context) (int64, error) {
	if err := db.pruneCluster(ctx); err != nil {
		return 0, err
	}
	if err := db.pruneWebhooks(ctx); err != nil {
		return 0, err
	}
	if err := db.pruneMemory(ctx); err != nil {
		return 0, err
	}
	if err := db.pruneParked(ctx); err != nil {
		return 0, err
	}
	if db.opts.Retention == 0 {
		return 0, nil
	}
	cutoff := db.now().Add(-db.opts.Retention)
	res, err := db.w.ExecContext(ctx, `DELETE FROM messages WHERE created < ?`, nanos(cutoff))
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune history: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune history: %w", err)
	}
	return n, nil
}
