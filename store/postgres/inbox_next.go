package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// A turn that ends on an instance with more to run hands its slot on in
// the row write that marks it done (FinishNextInbox): the done row names
// the entry its holder takes next (inbox.next) and carries the lease of
// that entry (its expires, set to ttl from now), so that the entry's own
// row is not written to claim it. A message queued behind a busy
// conversation costs no claim of its own in a burst: put, then done.
//
// The entry so taken is its holder's while the done row's expires is in
// the future, and for as long as the heartbeat of the process that took
// it (inbox.next_process, store.Instance.Process) is younger than the
// lease_ttl it was taken with (inbox.next_ttl): a live instance keeps it
// without writing its row, and a dead one loses it lease_ttl after its
// last heartbeat at the latest, as a claim expires lease_ttl after its
// last renewal (and after the fence stopped its calls: the fence trips
// at half of lease_ttl without a heartbeat). A process restarted under
// the same name has another id: what the dead one took waits for no
// heartbeat. Every statement that asks whether an entry is held (the
// stage and reply records, the renewal, the finish, the release,
// /cancel and /reset) asks it of both rows (handedTo, handedOn); a
// renewal claims the entry in its own row only when no such heartbeat
// keeps it (a store without heartbeats: a process with no id). Claims and hand-overs
// take one advisory lock (claimLock) before they read, so that a claimer
// that chose an entry another instance has just taken this way sees that
// instance's done row, which its row lock on the entry would not show.

// claimLock is the class of the advisory lock that serialises the inbox's
// claims and hand-overs across instances (pg_advisory_xact_lock(claimLock, 0)).
const claimLock = 0x6963 // "ic"

// handedOn is the condition that the inbox row tbl is an entry some
// instance took in a done row whose lease is live ($now the time).
func handedOn(tbl, now string) string {
	return `(` + tbl + `.holder = '' AND ` + tbl + `.claimed = 0 AND EXISTS (SELECT 1 FROM inbox p
		WHERE p.next = ` + tbl + `.id AND ` + handLive("p", now) + `))`
}

// handedTo is handedOn for the instance holder names (a parameter).
func handedTo(tbl, holder, now string) string {
	return `(` + tbl + `.holder = '' AND ` + tbl + `.claimed = 0 AND EXISTS (SELECT 1 FROM inbox p
		WHERE p.next = ` + tbl + `.id AND p.holder = ` + holder + ` AND ` + handLive("p", now) + `))`
}

// handLive is the condition that the lease the done row p holds of the
// entry it took is live: its expires, or its process's heartbeat.
func handLive(p, now string) string {
	return `(` + p + `.expires > ` + now + ` OR ` + heartbeatKeeps(p, now) + `)`
}

// heartbeatKeeps is the condition that the heartbeat of the process that
// took the entry in the done row p is younger than the lease_ttl it took
// it with.
func heartbeatKeeps(p, now string) string {
	return `(` + p + `.next_process <> '' AND EXISTS (SELECT 1 FROM instances h
		WHERE h.name = ` + p + `.holder AND h.process = ` + p + `.next_process AND h.last_seen > ` + now + ` - ` + p + `.next_ttl))`
}

var _ store.InboxHandOn = (*DB)(nil)

// rowAfterClaimLock runs query, which returns one row, after taking
// claimLock, in one batch and so one transaction (the lock is held until
// it commits), and scans the row into dest (pgq.ErrNoRows: none). The
// batch bypasses textPool: args are made storable here.
func (db *DB) rowAfterClaimLock(ctx context.Context, query string, args []any, dest ...any) error {
	b := &pgq.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1, 0)`, claimLock)
	b.Queue(query, storableArgs(args)...)
	br := db.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return err
	}
	if err := br.QueryRow().Scan(dest...); err != nil {
		return err
	}
	return br.Close()
}

// FinishNextInbox marks holder's entry id done, as FinishInbox does, and
// in the same row write takes for holder the oldest conversation head of
// gateways that nobody holds, reserves or has taken this way (the entry
// ClaimInbox would most likely claim next), for ttl from now and while
// the heartbeat of holder's process (process, "" none) is younger than
// ttl. It returns that entry; ok is false when there was none (the entry
// is then done all the same). ErrNotHeld: id was not holder's; nothing
// was written.
func (db *DB) FinishNextInbox(ctx context.Context, id int64, holder, process string, gateways []string, ttl time.Duration) (store.InboxEntry, bool, error) {
	if ttl <= 0 {
		return store.InboxEntry{}, false, fmt.Errorf("postgres: finish inbox entry %d: ttl %v is not positive", id, ttl)
	}
	now := db.now()
	var next int64
	var (
		mid, files, stage, received *int64
		gw, key, conv, receiver     *string
		data                        []byte
	)
	err := db.rowAfterClaimLock(ctx, `WITH nxt AS (
			SELECT i.id FROM inbox i
			WHERE i.id = ANY(ARRAY(SELECT h.id FROM (
				SELECT DISTINCT ON (conv) id, gateway, holder, claimed FROM inbox
				WHERE done = 0 AND id <> $2 ORDER BY conv, id) h
			  WHERE h.gateway = ANY($5) AND h.holder = '' AND h.claimed = 0))
			  AND i.done = 0 AND i.gateway = ANY($5) AND i.holder = '' AND i.claimed = 0
			  AND NOT EXISTS (SELECT 1 FROM inbox p WHERE p.next = i.id AND `+handLive("p", "$4")+`)
			ORDER BY i.id LIMIT 1
			FOR UPDATE SKIP LOCKED),
		up AS (UPDATE inbox SET done = $1, holder = $3, claimed = 1,
				next = COALESCE((SELECT id FROM nxt), 0), next_process = $7, next_ttl = $8,
				expires = CASE WHEN EXISTS (SELECT 1 FROM nxt) THEN $6::bigint ELSE expires END
			WHERE id = $2 AND done = 0 AND ((holder = $3 AND claimed = 1) OR `+handedTo("inbox", "$3", "$4")+`)
			RETURNING next)
		SELECT up.next, nx.id, nx.gateway, nx.msg_key, nx.conv, nx.data, nx.files, nx.receiver, `+effectiveStage("nx")+`, nx.received
		FROM up LEFT JOIN inbox nx ON nx.id = up.next AND up.next <> 0, pg_notify('`+inboxChannel+`', '')`,
		[]any{nanos(now), id, holder, nanos(now), gateways, nanos(now.Add(ttl)), process, int64(ttl)},
		&next, &mid, &gw, &key, &conv, &data, &files, &receiver, &stage, &received)
	if errors.Is(err, pgq.ErrNoRows) {
		return store.InboxEntry{}, false, fmt.Errorf("postgres: finish inbox entry %d: %w", id, store.ErrNotHeld)
	}
	if err != nil {
		return store.InboxEntry{}, false, fmt.Errorf("postgres: finish inbox entry %d: %w", id, err)
	}
	if next == 0 || mid == nil {
		return store.InboxEntry{}, false, nil
	}
	e := store.InboxEntry{ID: *mid, Gateway: *gw, Key: *key, Conv: *conv, Data: data, Files: int(*files),
		Receiver: *receiver, Stage: int(*stage), Received: fromNanos(*received)}
	return e, true, nil
}
