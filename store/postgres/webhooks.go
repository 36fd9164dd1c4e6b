package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
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

// WebhookThread returns the incident's recorded thread, or the zero value.
func (db *DB) WebhookThread(ctx context.Context, hook, incident string) (record.WebhookThread, error) {
	var t record.WebhookThread
	err := db.pool.QueryRow(ctx, `SELECT conv, reply_to, opener FROM webhook_threads WHERE hook = $1 AND incident = $2`, hook, incident).
		Scan(&t.Conv, &t.ReplyTo, &t.Opener)
	if errors.Is(err, pgq.ErrNoRows) {
		return record.WebhookThread{}, nil
	}
	if err != nil {
		return record.WebhookThread{}, fmt.Errorf("postgres: webhook thread %s: %w", hook, err)
	}
	return t, nil
}

// ClaimWebhookThread records instance's claim to open the incident's
// thread, or takes over a stale claim that recorded none; otherwise it
// returns what is recorded.
func (db *DB) ClaimWebhookThread(ctx context.Context, hook, incident, instance string, stale time.Duration) (record.WebhookThread, bool, error) {
	now := db.now()
	res, err := db.pool.Exec(ctx, `INSERT INTO webhook_threads (hook, incident, conv, created, opener) VALUES ($1, $2, '', $3, $4)
		ON CONFLICT (hook, incident) DO UPDATE SET opener = excluded.opener, created = excluded.created
		WHERE webhook_threads.conv = '' AND webhook_threads.created <= $5`,
		hook, incident, nanos(now), instance, nanos(now.Add(-stale)))
	if err != nil {
		return record.WebhookThread{}, false, fmt.Errorf("postgres: claim webhook thread %s: %w", hook, err)
	}
	if res.RowsAffected() == 1 {
		return record.WebhookThread{Opener: instance}, true, nil
	}
	t, err := db.WebhookThread(ctx, hook, incident)
	return t, false, err
}

// SetWebhookThread records t for instance's claim, and returns the
// recorded thread.
func (db *DB) SetWebhookThread(ctx context.Context, hook, incident, instance string, t record.WebhookThread) (record.WebhookThread, error) {
	if _, err := db.pool.Exec(ctx, `UPDATE webhook_threads SET conv = $1, reply_to = $2, opener = ''
		WHERE hook = $3 AND incident = $4 AND opener = $5 AND conv = ''`, t.Conv, t.ReplyTo, hook, incident, instance); err != nil {
		return record.WebhookThread{}, fmt.Errorf("postgres: set webhook thread %s: %w", hook, err)
	}
	return db.WebhookThread(ctx, hook, incident)
}

// ReleaseWebhookThread forgets instance's claim that recorded no thread.
func (db *DB) ReleaseWebhookThread(ctx context.Context, hook, incident, instance string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM webhook_threads WHERE hook = $1 AND incident = $2 AND opener = $3 AND conv = ''`,
		hook, incident, instance); err != nil {
		return fmt.Errorf("postgres: release webhook thread %s: %w", hook, err)
	}
	return nil
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
