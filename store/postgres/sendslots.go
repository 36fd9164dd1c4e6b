package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store"
)

var _ store.SendSlots = (*DB)(nil)

// ReserveSend reserves the earliest time at which one more request fits
// every limit, in one transaction of two round trips, since a token's
// reservations queue on its row's lock and the time it is held bounds
// the token's sends a second: BEGIN, an insert of the keys' rows that do
// not exist yet, a SELECT … FOR UPDATE that locks them in key order (so
// that concurrent reservations sharing keys never deadlock) and returns
// them, and now, read on the server's clock once each row is held; then
// the update that records the time under each key, and COMMIT. Locking
// writes nothing: each key's row is written once per reservation. Without
// Options.Now, now is the server's clock.
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
	slices.SortFunc(limits, func(a, b store.SendLimit) int { return strings.Compare(a.Key, b.Key) })
	keys := make([]string, len(limits))
	for i, l := range limits {
		if l.N <= 0 || l.Per <= 0 || l.Key == "" || l.Margin < 0 || l.Margin >= l.Per {
			return 0, fmt.Errorf("postgres: reserve send slot: limit %q %d per %v (margin %v): want a key, N > 0, Per > 0 and 0 <= Margin < Per", l.Key, l.N, l.Per, l.Margin)
		}
		if i > 0 && l.Key == keys[i-1] {
			return 0, fmt.Errorf("postgres: reserve send slot: key %q given twice", l.Key)
		}
		keys[i] = l.Key
	}
	wait, err := db.reserveSend(ctx, limits, keys)
	if err != nil {
		return 0, fmt.Errorf("postgres: reserve send slot %s: %w", strings.Join(keys, ", "), err)
	}
	return wait, nil
}

// reserveSend is ReserveSend's transaction, on a connection of its own
// for its two batches: one that begins it and locks the rows, one that
// writes them and commits. A transaction left open by an error is rolled
// back; a connection that cannot roll back is closed (the pool drops a
// connection given back closed or inside a transaction).
func (db *DB) reserveSend(ctx context.Context, limits []store.SendLimit, keys []string) (_ time.Duration, err error) {
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

	held, clock, err := lockSlots(ctx, conn, keys)
	if err != nil {
		return 0, err
	}
	now := clock
	if !db.serverClock {
		now = db.now().UnixNano()
	}
	at, packed, owners, err := planReservation(now, limits, held)
	if err != nil {
		return 0, err
	}
	if err := commitSlots(ctx, conn, keys, packed, owners, at); err != nil {
		return 0, err
	}
	committed = true
	return time.Duration(at - now), nil
}

// lockSlots is reserveSend's first batch: BEGIN, the insert of the rows
// of keys (sorted) not there yet, in key order, the SELECT … FOR UPDATE
// that locks every row of keys in key order, and the server's clock, read
// once every row is held. An existing row is only locked, not written
// (a no-op upsert would write a new version of it). It returns the
// reservations held under each key. On an error the transaction may be
// left open.
func lockSlots(ctx context.Context, conn *pgx.Conn, keys []string) (map[string][]slot, int64, error) {
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`INSERT INTO send_slots (key, times, last) SELECT k, ''::bytea, 0 FROM unnest($1::text[]) AS k
			ORDER BY k ON CONFLICT (key) DO NOTHING`, keys)
	b.Queue(`SELECT key, times, owners FROM send_slots WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE`, keys)
	b.Queue(`SELECT (extract(epoch FROM clock_timestamp()) * 1000000000)::bigint`)
	held := make(map[string][]slot, len(keys))
	var clock int64
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return nil, 0, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, 0, err
	}
	for rows.Next() {
		var k string
		var t, o []byte
		if err := rows.Scan(&k, &t, &o); err != nil {
			rows.Close()
			return nil, 0, err
		}
		held[k] = unpackSlots(t, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if err := br.QueryRow().Scan(&clock); err != nil {
		return nil, 0, err
	}
	return held, clock, br.Close()
}

// slot is one reservation under a key: its time and a hash of who
// reserved it (0: not known).
type slot struct {
	at    int64
	owner uint32
}

// ownerOf is the hash stored for reserver; 0 for "", which is nobody's.
func ownerOf(reserver string) uint32 {
	if reserver == "" {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(reserver))
	return max(h.Sum32(), 1)
}

// planReservation is the reservation at now for limits given the
// reservations held under each key: its time, and each limit's
// reservations in its window with it added, packed for the update (times
// and owners). It refuses a key holding maxReserved reservations or more.
func planReservation(now int64, limits []store.SendLimit, held map[string][]slot) (int64, [][]byte, [][]byte, error) {
	for _, l := range limits {
		if n := len(held[l.Key]); n >= maxReserved {
			return 0, nil, nil, fmt.Errorf("%d reservations under %q: too many waiting", n, l.Key)
		}
	}
	times := make([][]slot, len(limits))
	for i, l := range limits {
		times[i] = recent(held[l.Key], now-int64(l.Per))
	}
	at := earliest(now, limits, times)
	packed := make([][]byte, len(limits))
	owners := make([][]byte, len(limits))
	for i, l := range limits {
		packed[i], owners[i] = packSlots(insertSorted(times[i], slot{at: at, owner: ownerOf(l.Reserver)}))
	}
	return at, packed, owners, nil
}

// commitSlots is reserveSend's second batch: the update that records
// each key's reservations (packed[i] and owners[i] under keys[i]) and the
// newest, at, then COMMIT. On an error the transaction may be left open.
func commitSlots(ctx context.Context, conn *pgx.Conn, keys []string, packed, owners [][]byte, at int64) error {
	// last is the newest reservation under each key.
	b := &pgx.Batch{}
	b.Queue(`UPDATE send_slots SET times = u.times, owners = u.owners, last = greatest(send_slots.last, $4)
			FROM unnest($1::text[], $2::bytea[], $3::bytea[]) AS u(key, times, owners) WHERE send_slots.key = u.key`,
		keys, packed, owners, at)
	b.Queue(`COMMIT`)
	br := conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return err
	}
	if _, err := br.Exec(); err != nil {
		br.Close()
		return err
	}
	return br.Close()
}

// maxReserved bounds the reservations kept under one key (those not yet
// out of their window): past it a reservation is refused, and the caller
// paces on its own. At 30 a second it is over five minutes of backlog.
const maxReserved = 10_000

// recent is times (sorted) from the first not before since.
func recent(times []slot, since int64) []slot {
	i, _ := slices.BinarySearchFunc(times, since, func(s slot, t int64) int { return cmpInt(s.at, t) })
	return times[i:]
}

// earliest is the first time, not before now, at which one more request
// fits every limit given the reservations under each (times[i], sorted).
// Reservations may lie in the future (other requests waiting for their
// slot); a request may take a free slot before them, so a chat held back
// by its own limit does not hold back the token's other chats. The
// candidates are now and the end of each reservation's window (the
// shorter one of a reserver's own requests too); the last of them always
// fits.
func earliest(now int64, limits []store.SendLimit, times [][]slot) int64 {
	cands := []int64{now}
	for i, l := range limits {
		for _, t := range times[i] {
			if c := t.at + int64(l.Per); c > now {
				cands = append(cands, c)
			}
			if c := t.at + int64(l.Per-l.Margin); l.Margin > 0 && c > now {
				cands = append(cands, c)
			}
		}
	}
	slices.Sort(cands)
	for _, x := range slices.Compact(cands) {
		ok := true
		for i, l := range limits {
			if !fits(times[i], l, slot{at: x, owner: ownerOf(l.Reserver)}) {
				ok = false
				break
			}
		}
		if ok {
			return x
		}
	}
	return cands[len(cands)-1] // not reached: see above
}

// fits reports whether a request x keeps times (sorted) within l: with x
// added, no N+1 consecutive requests lie within a window of Per, or of
// Per-Margin when x's reserver (known) reserved all N+1.
func fits(times []slot, l store.SendLimit, x slot) bool {
	all := insertSorted(times, x)
	first, _ := slices.BinarySearchFunc(all, x.at, func(s slot, t int64) int { return cmpInt(s.at, t) })
	last := first
	for last+1 < len(all) && all[last+1].at == x.at {
		last++
	}
	// Only the runs of N+1 that hold an x can be new.
	for j := max(0, first-l.N); j <= last && j+l.N < len(all); j++ {
		need := int64(l.Per)
		if l.Margin > 0 && x.owner != 0 && ownedBy(all[j:j+l.N+1], x.owner) {
			need -= int64(l.Margin)
		}
		if all[j+l.N].at-all[j].at < need {
			return false
		}
	}
	return true
}

// ownedBy reports whether owner reserved every one of run.
func ownedBy(run []slot, owner uint32) bool {
	for _, s := range run {
		if s.owner != owner {
			return false
		}
	}
	return true
}

// cmpInt compares a and b.
func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// insertSorted returns a new slice: times with x in its place (after
// those at the same time).
func insertSorted(times []slot, x slot) []slot {
	i, _ := slices.BinarySearchFunc(times, x.at+1, func(s slot, t int64) int { return cmpInt(s.at, t) })
	out := make([]slot, 0, len(times)+1)
	out = append(out, times[:i]...)
	out = append(out, x)
	return append(out, times[i:]...)
}

// packSlots is times as big-endian int64s and their owners as big-endian
// uint32s, in the same order.
func packSlots(times []slot) (packed, owners []byte) {
	packed = make([]byte, 0, 8*len(times))
	owners = make([]byte, 0, 4*len(times))
	for _, t := range times {
		packed = binary.BigEndian.AppendUint64(packed, uint64(t.at))
		owners = binary.BigEndian.AppendUint32(owners, t.owner)
	}
	return packed, owners
}

// unpackSlots reverses packSlots; a trailing partial value is dropped,
// and owners that do not match the times (a row written before they were
// kept) are all 0, nobody's.
func unpackSlots(packed, owners []byte) []slot {
	n := len(packed) / 8
	times := make([]slot, 0, n)
	keep := len(owners) == 4*n
	for i := range n {
		s := slot{at: int64(binary.BigEndian.Uint64(packed[8*i:]))}
		if keep {
			s.owner = binary.BigEndian.Uint32(owners[4*i:])
		}
		times = append(times, s)
	}
	return times
}
