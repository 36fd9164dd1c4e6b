package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// inboxChannel is the LISTEN/NOTIFY channel that wakes the instances when
// an inbox entry may have become claimable.
const inboxChannel = "gatehouse_inbox"

var _ store.Inbox = (*DB)(nil)

// PutInbox writes e as pending unless its (gateway, key) is known, and
// wakes the instances (NOTIFY, sent when the insert commits).
func (db *DB) PutInbox(ctx context.Context, e store.InboxEntry, reserve time.Duration) (int64, bool, error) {
	now := db.now()
	holder, expires := "", int64(0)
	if reserve > 0 {
		holder, expires = e.Receiver, nanos(now.Add(reserve))
	}
	var id int64
	err := db.pool.QueryRow(ctx, `WITH ins AS (
		INSERT INTO inbox (gateway, msg_key, conv, data, files, receiver, received, holder, expires)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (gateway, msg_key) DO NOTHING RETURNING id)
		SELECT id FROM ins, pg_notify('`+inboxChannel+`', '')`,
		e.Gateway, e.Key, e.Conv, e.Data, e.Files, e.Receiver, nanos(now), holder, expires).Scan(&id)
	if errors.Is(err, pgq.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("postgres: put inbox entry of %s: %w", e.Conv, err)
	}
	return id, true, nil
}

// ClaimInbox claims the oldest claimable conversation head. The heads are
// read in one pass over the open entries by conversation (inbox_pending),
// not by probing each open entry for an older one of its conversation:
// on a table that grew since the planner's statistics (a burst on a young
// database) the probes were planned as a nested loop over every open entry,
// milliseconds a claim, and claims are one at a time. The row lock
// (FOR UPDATE SKIP LOCKED) makes concurrent claimers pass over a head
// another one is taking; one that commits first is seen by the recheck of
// the conditions on the row's newest version, so no two claim one entry.
func (db *DB) ClaimInbox(ctx context.Context, holder string, gateways []string, ttl time.Duration) (store.InboxEntry, bool, error) {
	if ttl <= 0 {
		return store.InboxEntry{}, false, fmt.Errorf("postgres: claim inbox entry: ttl %v is not positive", ttl)
	}
	now := db.now()
	var e store.InboxEntry
	var received int64
	// The claim reads after the lock that hand-overs take too.
	err := db.rowAfterClaimLock(ctx, `UPDATE inbox SET holder = $1, claimed = 1, expires = $2, cancel = 0
		WHERE id = (
			SELECT i.id FROM inbox i
			WHERE i.id = ANY(ARRAY(SELECT h.id FROM (
				SELECT DISTINCT ON (conv) id, gateway, holder, claimed, expires FROM inbox
				WHERE done = 0 ORDER BY conv, id) h
			  WHERE h.gateway = ANY($3) AND (h.holder = '' OR h.expires <= $4 OR (h.holder = $1 AND h.claimed = 0))))
			  AND i.done = 0 AND i.gateway = ANY($3)
			  AND (i.holder = '' OR i.expires <= $4 OR (i.holder = $1 AND i.claimed = 0))
			  AND NOT `+handedOn("i", "$4")+`
			ORDER BY i.id LIMIT 1
			FOR UPDATE SKIP LOCKED)
		RETURNING id, gateway, msg_key, conv, data, files, receiver, `+effectiveStage("inbox")+`, received`,
		[]any{holder, nanos(now.Add(ttl)), gateways, nanos(now)},
		&e.ID, &e.Gateway, &e.Key, &e.Conv, &e.Data, &e.Files, &e.Receiver, &e.Stage, &received)
	if errors.Is(err, pgq.ErrNoRows) {
		return store.InboxEntry{}, false, nil
	}
	if err != nil {
		return store.InboxEntry{}, false, fmt.Errorf("postgres: claim inbox entry: %w", err)
	}
	e.Received = fromNanos(received)
	return e, true, nil
}

// RenewInbox extends holder's claims and reservations of ids.
func (db *DB) RenewInbox(ctx context.Context, holder string, ids []int64, ttl time.Duration) error {
	if len(ids) == 0 {
		return nil
	}
	// An entry taken in a done row (FinishNextInbox) is claimed in its
	// own row by its first renewal, unless its process's heartbeat keeps
	// it (then nothing is written).
	now := db.now()
	if _, err := db.pool.Exec(ctx, `UPDATE inbox SET expires = $1, holder = $2,
			claimed = CASE WHEN holder = '' THEN 1 ELSE claimed END
		WHERE id = ANY($3) AND done = 0 AND (holder = $2 OR (`+handedTo("inbox", "$2", "$4")+`
			AND NOT EXISTS (SELECT 1 FROM inbox k WHERE k.next = inbox.id AND k.holder = $2 AND `+heartbeatKeeps("k", "$4")+`)))`,
		nanos(now.Add(ttl)), holder, ids, nanos(now)); err != nil {
		return fmt.Errorf("postgres: renew inbox claims: %w", err)
	}
	return nil
}

// FinishInbox marks holder's entry done and wakes the instances: the
// conversation's next entry is claimable.
func (db *DB) FinishInbox(ctx context.Context, id int64, holder string) error {
	var one int
	err := db.pool.QueryRow(ctx, `WITH up AS (
		UPDATE inbox SET done = $1, holder = $3, claimed = 1
		WHERE id = $2 AND done = 0 AND ((holder = $3 AND claimed = 1) OR `+handedTo("inbox", "$3", "$1")+`) RETURNING 1)
		SELECT 1 FROM up, pg_notify('`+inboxChannel+`', '')`, nanos(db.now()), id, holder).Scan(&one)
	if errors.Is(err, pgq.ErrNoRows) {
		return fmt.Errorf("postgres: finish inbox entry %d: %w", id, store.ErrNotHeld)
	}
	if err != nil {
		return fmt.Errorf("postgres: finish inbox entry %d: %w", id, err)
	}
	return nil
}

// ReleaseInbox gives holder's claim of id back and wakes the instances.
func (db *DB) ReleaseInbox(ctx context.Context, id int64, holder string) error {
	// An entry taken in a done row is given back by that row letting it
	// go.
	_, err := db.pool.Exec(ctx, `WITH up AS (
		UPDATE inbox SET holder = '', claimed = 0, expires = 0 WHERE id = $1 AND holder = $2 AND done = 0 RETURNING 1),
		handed AS (UPDATE inbox SET next = 0, next_process = '' WHERE next = $1 AND holder = $2 AND done <> 0 RETURNING 1)
		SELECT pg_notify('`+inboxChannel+`', '') WHERE EXISTS (SELECT 1 FROM up) OR EXISTS (SELECT 1 FROM handed)`, id, holder)
	if err != nil {
		return fmt.Errorf("postgres: release inbox entry %d: %w", id, err)
	}
	return nil
}

// CancelInbox marks conv's live claimed entry cancelled and wakes the
// instances with InboxCancel.
func (db *DB) CancelInbox(ctx context.Context, conv string) (bool, error) {
	var one int
	err := db.pool.QueryRow(ctx, `WITH up AS (
		UPDATE inbox SET cancel = GREATEST(cancel, 1)
		WHERE conv = $1 AND done = 0 AND ((claimed = 1 AND expires > $2) OR `+handedOn("inbox", "$2")+`) RETURNING 1)
		SELECT 1 FROM up, pg_notify('`+inboxChannel+`', '`+store.InboxCancel+`') LIMIT 1`, conv, nanos(db.now())).Scan(&one)
	if errors.Is(err, pgq.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres: cancel the turn of %s: %w", conv, err)
	}
	return true, nil
}

// CancelledInbox lists holder's pending entries asked to stop.
func (db *DB) CancelledInbox(ctx context.Context, holder string) ([]int64, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM inbox
		WHERE cancel = 1 AND done = 0 AND (holder = $1 OR `+handedTo("inbox", "$1", "$2")+`) ORDER BY id LIMIT 100`,
		holder, nanos(db.now()))
	if err != nil {
		return nil, fmt.Errorf("postgres: cancelled inbox entries: %w", err)
	}
	ids, err := pgq.CollectRows(rows, pgq.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("postgres: cancelled inbox entries: %w", err)
	}
	return ids, nil
}

// WatchInbox listens on its own connection (taken from the pool and
// closed at the end, never given back listening) and calls wake on each
// notification.
func (db *DB) WatchInbox(ctx context.Context, wake func(string)) error {
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: watch inbox: %w", err)
	}
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection is dropped either way
	if _, err := conn.Exec(ctx, `LISTEN `+inboxChannel); err != nil {
		return fmt.Errorf("postgres: watch inbox: %w", err)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("postgres: watch inbox: %w", err)
		}
		wake(n.Payload)
	}
}

// pruneInbox deletes entries done longer than store.InboxKeep ago, but
// not a done row that still holds the entry its holder took when it was
// marked done (FinishNextInbox), while that entry is neither done nor
// claimed in its own row: a turn may run longer than InboxKeep, and with
// the row gone another instance would claim the entry it runs.
func (db *DB) pruneInbox(ctx context.Context) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM inbox WHERE done <> 0 AND done < $1
		AND NOT (next <> 0 AND EXISTS (SELECT 1 FROM inbox n
			WHERE n.id = inbox.next AND n.done = 0 AND n.holder = '' AND n.claimed = 0))`,
		nanos(db.now().Add(-store.InboxKeep))); err != nil {
		return fmt.Errorf("postgres: prune inbox: %w", err)
	}
	return nil
}
