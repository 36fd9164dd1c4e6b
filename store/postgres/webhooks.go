package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// ClaimWebhookDelivery records instance's claim of a new delivery, or
// takes over a stale unfinished one; otherwise it reports what is there.
func (db *DB) ClaimWebhookDelivery(ctx context.Context, hook, id, instance string, stale time.Duration) (record.WebhookClaim, error) {
	now := db.now()
	res, err := db.pool.Exec(ctx, `INSERT INTO webhook_deliveries (hook, id, instance, claimed) VALUES ($1, $2, $3, $4)
		ON CONFLICT (hook, id) DO UPDATE SET instance = excluded.instance, claimed = excluded.claimed
		WHERE webhook_deliveries.done = 0 AND webhook_deliveries.claimed <= $5`,
		hook, id, instance, nanos(now), nanos(now.Add(-stale)))
	if err != nil {
		return 0, fmt.Errorf("postgres: claim webhook delivery %s: %w", hook, err)
	}
	if res.RowsAffected() == 1 {
		return record.WebhookTaken, nil
	}
	var done int
	err = db.pool.QueryRow(ctx, `SELECT done FROM webhook_deliveries WHERE hook = $1 AND id = $2`, hook, id).Scan(&done)
	if err != nil {
		return 0, fmt.Errorf("postgres: claim webhook delivery %s: %w", hook, err)
	}
	if done != 0 {
		return record.WebhookDuplicate, nil
	}
	return record.WebhookBusy, nil
}

// FinishWebhookDelivery marks instance's claim done.
func (db *DB) FinishWebhookDelivery(ctx context.Context, hook, id, instance string) error {
	if _, err := db.pool.Exec(ctx, `UPDATE webhook_deliveries SET done = 1 WHERE hook = $1 AND id = $2 AND instance = $3`,
		hook, id, instance); err != nil {
		return fmt.Errorf("postgres: finish webhook delivery %s: %w", hook, err)
	}
	return nil
}

// ReleaseWebhookDelivery forgets instance's unfinished claim.
func (db *DB) ReleaseWebhookDelivery(ctx context.Context, hook, id, instance string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM webhook_deliveries WHERE hook = $1 AND id = $2 AND instance = $3 AND done = 0`,
		hook, id, instance); err != nil {
		return fmt.Errorf("postgres: release webhook delivery %s: %w", hook, err)
	}
	return nil
}

// WebhookThread returns the incident's recorded conversation, or "".
func (db *DB) WebhookThread(ctx context.Context, hook, incident string) (string, error) {
	var conv string
	err := db.pool.QueryRow(ctx, `SELECT conv FROM webhook_threads WHERE hook = $1 AND incident = $2`, hook, incident).Scan(&conv)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("postgres: webhook thread %s: %w", hook, err)
	}
	return conv, nil
}

// SetWebhookThread records conv for the incident unless one is, and
// returns the recorded one.
func (db *DB) SetWebhookThread(ctx context.Context, hook, incident, conv string) (string, error) {
	if _, err := db.pool.Exec(ctx, `INSERT INTO webhook_threads (hook, incident, conv, created) VALUES ($1, $2, $3, $4)
		ON CONFLICT (hook, incident) DO NOTHING`, hook, incident, conv, nanos(db.now())); err != nil {
		return "", fmt.Errorf("postgres: set webhook thread %s: %w", hook, err)
	}
	return db.WebhookThread(ctx, hook, incident)
}

// pruneWebhooks forgets deliveries and incident threads past
// store.WebhookKeep.
func (db *DB) pruneWebhooks(ctx context.Context) error {
	cutoff := nanos(db.now().Add(-store.WebhookKeep))
	if _, err := db.pool.Exec(ctx, `DELETE FROM webhook_deliveries WHERE claimed < $1`, cutoff); err != nil {
		return fmt.Errorf("postgres: prune webhook deliveries: %w", err)
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM webhook_threads WHERE created < $1`, cutoff); err != nil {
		return fmt.Errorf("postgres: prune webhook threads: %w", err)
	}
	return nil
}
