package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

var _ store.SendSlots = (*DB)(nil)

// ReserveSend reserves the earliest time at which one more request fits
// every limit, in one transaction of two round trips, since a token's
// reservations queue on its row's lock and the time it is held bounds
// the token's sends a second.
//
// A reservation is written to one row per key that no other key of it
// extends (a chat's, "<token>:chat:<id>", under the token's): the times
// under a key are those of its own row and of the rows of the keys that
// extend it. So a reply's reservation writes its chat's row alone; the
// token's row is only locked, which serialises the token's reservations
// (each reads the rows under the token once it holds the token's lock).
// The first batch begins the transaction, creates the rows of the
// extended keys if missing, locks them (SELECT … FOR UPDATE: locking
// writes nothing), then the others, in key order (so that concurrent
// reservations never deadlock), reads the rows that extend them and the
// server's clock, once every row is held; the second writes the rows and
// commits. A row to create that another reservation created meanwhile
// (no lock covers a row that does not exist) fails the insert: the
// reservation is made again. Without Options.Now, now is the server's
// clock.
//
// Each time written is recorded with its owner (SendLimit.Owner) in the
// row's owned pairs, so that a later reservation of the same owner can
// tell a run of its own requests (SendLimit.Own) from one that mixes
// instances (SendLimit.Per).
func (db *DB) ReserveSend(ctx context.Context, limits ...store.SendLimit) (time.Duration, error) {
	if len(limits) == 0 {
		return 0, nil
	}
	limits = slices.Clone(limits)
	for i := range limits {
		// The batches below run on a connection of their own, past
		// textPool: the keys are made storable here.
		limits[i].Key = textutil.Storable(limits[i].Key)
	}
	// By key, in place: a send's few limits (the chat's and the global),
	// sorted with neither the allocations of sort.Slice nor a sort of
	// slices instantiated for this one struct (see
	// TestReleaseSortsShareOneShape in internal/archtest).
	for i := 1; i < len(limits); i++ {
		for j := i; j > 0 && limits[j].Key < limits[j-1].Key; j-- {
			limits[j], limits[j-1] = limits[j-1], limits[j]
		}
	}
	keys := make([]string, len(limits))
	for i, l := range limits {
		if l.N <= 0 || l.Per <= 0 || l.Key == "" {
			return 0, fmt.Errorf("postgres: reserve send slot: limit %q %d per %v: want a key, N > 0 and Per > 0", l.Key, l.N, l.Per)
		}
		if i > 0 && l.Key == keys[i-1] {
			return 0, fmt.Errorf("postgres: reserve send slot: key %q given twice", l.Key)
		}
		if l.Owner != limits[0].Owner {
			return 0, fmt.Errorf("postgres: reserve send slot: owners %q and %q in one reservation", limits[0].Owner, l.Owner)
		}
		keys[i] = l.Key
	}
	for attempt := 1; ; attempt++ {
		wait, err := db.reserveSend(ctx, limits)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && attempt < 3 {
			continue // a row this reservation creates was created meanwhile
		}
		if err != nil {
			return 0, fmt.Errorf("postgres: reserve send slot %s: %w", strings.Join(keys, ", "), err)
		}
		return wait, nil
	}
}

// extends reports whether key k extends key of: it is of's and more
// ("<token>:chat:<id>" extends "<token>").
func extends(k, of string) bool {
	return len(k) > len(of) && strings.HasPrefix(k, of) && k[len(of)] == ':'
}

// reservation is one ReserveSend's keys: the extended ones (another key
// of it extends them), whose rows are locked but not written, and the
// others, its leaves, whose rows get the reservation.
type reservation struct {
	limits   []store.SendLimit
	extended []string
	leaves   []string
	span     time.Duration // the longest window of its limits
	owner    uint64        // ownerTag of its limits' Owner; 0: none
}

func newReservation(limits []store.SendLimit) reservation {
	r := reservation{limits: limits, owner: ownerTag(limits[0].Owner)}
	for _, l := range limits {
		r.span = max(r.span, l.Per)
		if slices.ContainsFunc(limits, func(o store.SendLimit) bool { return extends(o.Key, l.Key) }) {
			r.extended = append(r.extended, l.Key)
		} else {
			r.leaves = append(r.leaves, l.Key)
		}
	}
	return r
}

// reserveSend is one attempt at ReserveSend's transaction, on a
// connection of its own for its two batches. A transaction left open by
// an error is rolled back; a connection that cannot roll back is closed
// (the pool drops a connection given back closed or inside a
// transaction).
func (db *DB) reserveSend(ctx context.Context, limits []store.SendLimit) (_ time.Duration, err error) {
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer pc.Release()
	conn := pc.Conn()
	committed := false
	defer func() {
		if committed {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, rerr := conn.Exec(rctx, `ROLLBACK`); rerr != nil {
			conn.Close(rctx) //nolint:errcheck // dropped either way
		}
	}()

	r := newReservation(limits)
	var since *int64 // the rows under an extended key read from then on; nil: the server's clock less span
	if !db.serverClock {
		t := db.now().UnixNano() - int64(r.span)
		since = &t
	}
	rows, clock, err := lockSlots(ctx, conn, r, since)
	if err != nil {
		return 0, err
	}
	now := clock
	if !db.serverClock {
		now = db.now().UnixNano()
	}
	at, writes, err := planReservation(now, r, rows)
	if err != nil {
		return 0, err
	}
	end, err := commitSlots(ctx, conn, writes, at)
	if err != nil {
		return 0, err
	}
	committed = true
	if !db.serverClock {
		end = db.now().UnixNano()
	}
	// From the clock read once committed, not the one the plan used: the
	// caller waits from when it has the answer, and the commit's round
	// trip (however slow) is not added to its wait; below zero when the
	// time passed meanwhile (the caller is late: see gateways' reserve).
	return time.Duration(at - end), nil
}

// lockSlots is reserveSend's first batch: BEGIN; the insert of the
// extended keys' rows not there yet; the SELECT … FOR UPDATE of those
// rows, then of the leaves' rows, each in key order (each statement reads
// what was committed when it began, so the leaves' rows are read once
// the extended ones are held); the rows that extend an extended key and
// hold a reservation from since on (nil: span before the server's clock);
// and the server's clock, read once every row is held. An existing row is
// only locked, not written. It returns the rows read by key (a leaf
// without a row has none) and the clock. On an error the transaction may
// be left open.
func lockSlots(ctx context.Context, conn *pgq.Conn, r reservation, since *int64) (map[string][]stamp, int64, error) {
	b := &pgq.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`INSERT INTO send_slots (key, times, last) SELECT k, ''::bytea, 0 FROM unnest($1::text[]) AS k
			ORDER BY k ON CONFLICT (key) DO NOTHING`, r.extended)
	b.Queue(`SELECT key, times, owned FROM send_slots WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE`, r.extended)
	b.Queue(`SELECT key, times, owned FROM send_slots WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE`, r.leaves)
	b.Queue(`SELECT s.key, s.times, s.owned FROM send_slots s
			WHERE s.last >= COALESCE($2::bigint, `+nowSQL+` - $3::bigint) AND NOT s.key = ANY($4::text[])
			  AND EXISTS (SELECT 1 FROM unnest($1::text[]) AS e(key) WHERE starts_with(s.key, e.key || ':'))`,
		r.extended, since, int64(r.span), append(slices.Clone(r.extended), r.leaves...))
	b.Queue(`SELECT ` + nowSQL)
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return nil, 0, err
		}
	}
	rows := make(map[string][]stamp, len(r.limits))
	for range 3 {
		if err := readSlots(br, rows); err != nil {
			return nil, 0, err
		}
	}
	var clock int64
	if err := br.QueryRow().Scan(&clock); err != nil {
		return nil, 0, err
	}
	return rows, clock, br.Close()
}

// readSlots reads the next result of br, rows of key, times and owned,
// into rows.
func readSlots(br pgq.BatchResults, rows map[string][]stamp) error {
	res, err := br.Query()
	if err != nil {
		return err
	}
	defer res.Close()
	for res.Next() {
		var k string
		var t, owned []byte
		if err := res.Scan(&k, &t, &owned); err != nil {
			return err
		}
		rows[k] = unpackStamps(t, owned)
	}
	return res.Err()
}

// slotWrite is a leaf's row as a reservation leaves it.
type slotWrite struct {
	key          string
	times, owned []byte
	exists       bool // the row was there (and is locked): updated, not inserted
}

// planReservation is the reservation at now of r given the rows read
// (lockSlots): its time, and the rows of its leaves with it added (owned
// by r.owner), each keeping its reservations within the longest window of
// the limits it carries (its own and those of the keys it extends). It
// refuses a key holding maxReserved reservations or more.
func planReservation(now int64, r reservation, rows map[string][]stamp) (int64, []slotWrite, error) {
	times := make([][]stamp, len(r.limits))
	for i, l := range r.limits {
		var under []stamp
		for k, ts := range rows {
			if k == l.Key || extends(k, l.Key) {
				under = append(under, recent(ts, now-int64(l.Per))...)
			}
		}
		// sort.Slice: not a sort of slices instantiated for stamp (see
		// TestReleaseSortsShareOneShape in internal/archtest).
		sort.Slice(under, func(a, b int) bool { return compareStamps(under[a], under[b]) < 0 })
		if len(under) >= maxReserved {
			return 0, nil, fmt.Errorf("%d reservations under %q: too many waiting", len(under), l.Key)
		}
		times[i] = under
	}
	at := earliest(now, r.owner, r.limits, times)
	writes := make([]slotWrite, 0, len(r.leaves))
	for _, leaf := range r.leaves {
		keep := time.Duration(0)
		for _, l := range r.limits {
			if l.Key == leaf || extends(leaf, l.Key) {
				keep = max(keep, l.Per)
			}
		}
		own, exists := rows[leaf]
		kept := insertSorted(recent(own, now-int64(keep)), stamp{t: at, owner: r.owner})
		writes = append(writes, slotWrite{key: leaf, exists: exists, times: packTimes(kept), owned: packOwned(kept)})
	}
	return at, writes, nil
}

// commitSlots is reserveSend's second batch: the update of the leaves'
// rows that exist, the insert of those that do not (failing, 23505, if
// another reservation created one meanwhile), each with the newest
// reservation, at, then COMMIT, then the server's clock, which it
// returns. On an error the transaction may be left open.
func commitSlots(ctx context.Context, conn *pgq.Conn, writes []slotWrite, at int64) (int64, error) {
	var upd, ins struct {
		keys         []string
		times, owned [][]byte
	}
	for _, w := range writes {
		to := &ins
		if w.exists {
			to = &upd
		}
		to.keys = append(to.keys, w.key)
		to.times = append(to.times, w.times)
		to.owned = append(to.owned, w.owned)
	}
	// last is the newest reservation under each key.
	b := &pgq.Batch{}
	if len(upd.keys) > 0 {
		b.Queue(`UPDATE send_slots SET times = u.times, owned = u.owned, last = greatest(send_slots.last, $3)
			FROM unnest($1::text[], $2::bytea[], $4::bytea[]) AS u(key, times, owned) WHERE send_slots.key = u.key`,
			upd.keys, upd.times, at, upd.owned)
	}
	if len(ins.keys) > 0 {
		b.Queue(`INSERT INTO send_slots (key, times, owned, last)
			SELECT k, t, o, $3 FROM unnest($1::text[], $2::bytea[], $4::bytea[]) AS u(k, t, o) ORDER BY k`,
			ins.keys, ins.times, at, ins.owned)
	}
	b.Queue(`COMMIT`)
	b.Queue(`SELECT ` + nowSQL)
	br := conn.SendBatch(ctx, b)
	for range b.Len() - 1 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return 0, err
		}
	}
	var clock int64
	if err := br.QueryRow().Scan(&clock); err != nil {
		br.Close()
		return 0, err
	}
	return clock, br.Close()
}

// nowSQL is the server's clock as Unix nanoseconds.
const nowSQL = `(extract(epoch FROM clock_timestamp()) * 1000000000)::bigint`

// maxReserved bounds the reservations kept under one key (those not yet
// out of their window): past it a reservation is refused, and the caller
// paces on its own. At 30 a second it is over five minutes of backlog.
const maxReserved = 10_000
