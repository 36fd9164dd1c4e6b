package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// ClaimWebhookDelivery records instance's claim of a new delivery, or
// takes over a stale unfinished one; otherwise it reports what is there.
func (db *DB) ClaimWebhookDelivery(ctx context.Context, hook, id, instance string, stale time.Duration) (record.WebhookClaim, error) {
	now := db.now()
	res, err := db.exec(ctx, `INSERT INTO webhook_deliveries (hook, id, instance, claimed) VALUES (?, ?, ?, ?)
		ON CONFLICT (hook, id) DO UPDATE SET instance = excluded.instance, claimed = excluded.claimed
		WHERE webhook_deliveries.done = 0 AND webhook_deliveries.claimed <= ?`,
		hook, id, instance, nanos(now), nanos(now.Add(-stale)))
	if err != nil {
		return 0, fmt.Errorf("sqlite: claim webhook delivery %s: %w", hook, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, fmt.Errorf("sqlite: claim webhook delivery %s: %w", hook, err)
	} else if n == 1 {
		return record.WebhookTaken, nil
	}
	var done int
	err = db.queryRow(ctx, `SELECT done FROM webhook_deliveries WHERE hook = ? AND id = ?`, hook, id).Scan(&done)
	if err != nil {
		return 0, fmt.Errorf("sqlite: claim webhook delivery %s: %w", hook, err)
	}
	if done != 0 {
		return record.WebhookDuplicate, nil
	}
	return record.WebhookBusy, nil
}

// FinishWebhookDelivery marks instance's claim done.
func (db *DB) FinishWebhookDelivery(ctx context.Context, hook, id, instance string) error {
	if _, err := db.exec(ctx, `UPDATE webhook_deliveries SET done = 1 WHERE hook = ? AND id = ? AND instance = ?`,
		hook, id, instance); err != nil {
		return fmt.Errorf("sqlite: finish webhook delivery %s: %w", hook, err)
	}
	return nil
}

// ReleaseWebhookDelivery forgets instance's unfinished claim.
func (db *DB) ReleaseWebhookDelivery(ctx context.Context, hook, id, instance string) error {
	if _, err := db.exec(ctx, `DELETE FROM webhook_deliveries WHERE hook = ? AND id = ? AND instance = ? AND done = 0`,
		hook, id, instance); err != nil {
		return fmt.Errorf("sqlite: release webhook delivery %s: %w", hook, err)
	}
	return nil
}

// WebhookThread returns the incident's recorded conversation, or "".
func (db *DB) WebhookThread(ctx context.Context, hook, incident string) (string, error) {
	var conv string
	err := db.queryRow(ctx, `SELECT conv FROM webhook_threads WHERE hook = ? AND incident = ?`, hook, incident).Scan(&conv)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: webhook thread %s: %w", hook, err)
	}
	return conv, nil
}

// SetWebhookThread records conv for the incident unless one is, and
// returns the recorded one.
func (db *DB) SetWebhookThread(ctx context.Context, hook, incident, conv string) (string, error) {
	if _, err := db.exec(ctx, `INSERT INTO webhook_threads (hook, incident, conv, created) VALUES (?, ?, ?, ?)
		ON CONFLICT (hook, incident) DO NOTHING`, hook, incident, conv, nanos(db.now())); err != nil {
		return "", fmt.Errorf("sqlite: set webhook thread %s: %w", hook, err)
	}
	return db.WebhookThread(ctx, hook, incident)
}

// pruneWebhooks forgets deliveries and incident threads past
// store.WebhookKeep.
func (db *DB) pruneWebhooks(ctx context.Context) error {
	cutoff := nanos(db.now().Add(-store.WebhookKeep))
	if _, err := db.w.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE claimed < ?`, cutoff); err != nil {
		return fmt.Errorf("sqlite: prune webhook deliveries: %w", err)
	}
	if _, err := db.w.ExecContext(ctx, `DELETE FROM webhook_threads WHERE created < ?`, cutoff); err != nil {
		return fmt.Errorf("sqlite: prune webhook threads: %w", err)
	}
	return nil
}
