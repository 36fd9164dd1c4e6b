package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

var _ store.Outbox = (*DB)(nil)

// AddReply writes r as pending, composed by r.Composer now; a reply of an
// inbox entry that has one already is not written (ErrReplyExists).
func (db *DB) AddReply(ctx context.Context, r store.OutboxReply) (int64, error) {
	now := nanos(db.now())
	var inboxID *int64
	if r.InboxID != 0 {
		inboxID = &r.InboxID
	}
	var id int64
	err := db.pool.QueryRow(ctx, `INSERT INTO outbox (sender, gateway, chat, thread, text, composer, taken, state, created, updated, inbox_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $7, $7, $9)
		ON CONFLICT (inbox_id) WHERE inbox_id IS NOT NULL DO NOTHING RETURNING id`,
		r.Sender, r.Gateway, r.Chat, r.Thread, r.Text, r.Composer, now, store.ReplyPending, inboxID).Scan(&id)
	if errors.Is(err, pgq.ErrNoRows) {
		return 0, fmt.Errorf("postgres: add reply to %s:%s of inbox entry %d: %w", r.Gateway, r.Chat, r.InboxID, store.ErrReplyExists)
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: add reply to %s:%s: %w", r.Gateway, r.Chat, err)
	}
	return id, nil
}

// ReplyDone records the chunks accepted and the reply's state.
func (db *DB) ReplyDone(ctx context.Context, id int64, done int, state string) error {
	switch state {
	case store.ReplyPending, store.ReplySent, store.ReplyFailed:
	default:
		return fmt.Errorf("postgres: reply %d: unknown state %q", id, state)
	}
	if _, err := db.pool.Exec(ctx, `UPDATE outbox SET done = $2, state = $3, updated = $4 WHERE id = $1`,
		id, done, state, nanos(db.now())); err != nil {
		return fmt.Errorf("postgres: reply %d %s: %w", id, state, err)
	}
	return nil
}

// ClaimReplies hands instance the pending replies of sender whose composer
// is gone, in one conditional UPDATE: the rows are locked as they are
// chosen (SKIP LOCKED: a concurrent claimer takes others), and a row
// another claimer took meanwhile has a live composer, so it is not chosen.
func (db *DB) ClaimReplies(ctx context.Context, sender, instance string, ttl time.Duration, started time.Time, max int) ([]store.OutboxReply, error) {
	if max <= 0 {
		return nil, nil
	}
	now := db.now()
	rows, err := db.pool.Query(ctx, `UPDATE outbox SET composer = $2, taken = $3, updated = $3
		WHERE id IN (SELECT o.id FROM outbox o WHERE o.sender = $1 AND o.state = 'pending' AND (
				(o.composer = $2 AND o.taken < $5) OR
				(o.composer <> $2 AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.name = o.composer AND i.last_seen >= $4)))
			ORDER BY o.id LIMIT $6 FOR UPDATE SKIP LOCKED)
		RETURNING id, sender, gateway, chat, thread, text, composer, done, state`,
		sender, instance, nanos(now), nanos(now.Add(-ttl)), nanos(started), max)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim replies of %s: %w", sender, err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (store.OutboxReply, error) {
		var o store.OutboxReply
		err := r.Scan(&o.ID, &o.Sender, &o.Gateway, &o.Chat, &o.Thread, &o.Text, &o.Composer, &o.Done, &o.State)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: claim replies of %s: %w", sender, err)
	}
	// sort.Slice: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// pruneOutbox deletes replies unchanged for store.OutboxKeep and send
// slot keys idle for store.SendSlotKeep.
func (db *DB) pruneOutbox(ctx context.Context) error {
	now := db.now()
	if _, err := db.pool.Exec(ctx, `DELETE FROM outbox WHERE updated < $1`, nanos(now.Add(-store.OutboxKeep))); err != nil {
		return fmt.Errorf("postgres: prune outbox: %w", err)
	}
	// send_slots.last is on the clock the reservations used: the
	// server's unless Options.Now is set; both are Unix nanoseconds.
	if _, err := db.pool.Exec(ctx, `DELETE FROM send_slots WHERE last < $1`, nanos(now.Add(-store.SendSlotKeep))); err != nil {
		return fmt.Errorf("postgres: prune send slots: %w", err)
	}
	return nil
}
