package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
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
// the token's sends a second: BEGIN and an upsert that creates or locks
// the keys' rows in key order (so that concurrent reservations sharing
// keys never deadlock) and returns them with now, read on the server's
// clock once each row is held; then the update that records the time
// under each key, and COMMIT. Without Options.Now, now is the server's
// clock.
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
		if l.N <= 0 || l.Per <= 0 || l.Key == "" {
			return 0, fmt.Errorf("postgres: reserve send slot: limit %q %d per %v: want a key, N > 0 and Per > 0", l.Key, l.N, l.Per)
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
	at, packed, err := planReservation(now, limits, held)
	if err != nil {
		return 0, err
	}
	if err := commitSlots(ctx, conn, keys, packed, at); err != nil {
		return 0, err
	}
	committed = true
	return time.Duration(at - now), nil
}

// lockSlots is reserveSend's first batch: BEGIN and the upsert that
// creates or locks the rows of keys (sorted) in key order. It returns the
// reservations held under each key and the server's clock read once
// every row is held. On an error the transaction may be left open.
func lockSlots(ctx context.Context, conn *pgx.Conn, keys []string) (map[string][]int64, int64, error) {
	// The no-op update of an existing row locks it and returns it; the
	// clock is read per row as it is returned, so the newest reading
	// comes after every row is held.
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`INSERT INTO send_slots (key, times, last) SELECT k, ''::bytea, 0 FROM unnest($1::text[]) AS k
			ORDER BY k ON CONFLICT (key) DO UPDATE SET key = excluded.key
			RETURNING key, times, (extract(epoch FROM clock_timestamp()) * 1000000000)::bigint`, keys)
	held := make(map[string][]int64, len(keys))
	var clock int64
	br := conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, 0, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, 0, err
	}
	for rows.Next() {
		var k string
		var t []byte
		var c int64
		if err := rows.Scan(&k, &t, &c); err != nil {
			rows.Close()
			br.Close()
			return nil, 0, err
		}
		held[k] = unpackTimes(t)
		clock = max(clock, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		br.Close()
		return nil, 0, err
	}
	if err := br.Close(); err != nil {
		return nil, 0, err
	}
	return held, clock, nil
}

// planReservation is the reservation at now for limits given the
// reservations held under each key: its time, and each limit's
// reservations in its window with it added, packed for the update. It
// refuses a key holding maxReserved reservations or more.
func planReservation(now int64, limits []store.SendLimit, held map[string][]int64) (int64, [][]byte, error) {
	for _, l := range limits {
		if n := len(held[l.Key]); n >= maxReserved {
			return 0, nil, fmt.Errorf("%d reservations under %q: too many waiting", n, l.Key)
		}
	}
	times := make([][]int64, len(limits))
	for i, l := range limits {
		times[i] = recent(held[l.Key], now-int64(l.Per))
	}
	at := earliest(now, limits, times)
	packed := make([][]byte, len(limits))
	for i := range limits {
		packed[i] = packTimes(insertSorted(times[i], at))
	}
	return at, packed, nil
}

// commitSlots is reserveSend's second batch: the update that records
// each key's reservations (packed[i] under keys[i]) and the newest, at,
// then COMMIT. On an error the transaction may be left open.
func commitSlots(ctx context.Context, conn *pgx.Conn, keys []string, packed [][]byte, at int64) error {
	// last is the newest reservation under each key.
	b := &pgx.Batch{}
	b.Queue(`UPDATE send_slots SET times = u.times, last = greatest(send_slots.last, $3)
			FROM unnest($1::text[], $2::bytea[]) AS u(key, times) WHERE send_slots.key = u.key`, keys, packed, at)
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
func recent(times []int64, since int64) []int64 {
	i, _ := slices.BinarySearch(times, since)
	return times[i:]
}

// earliest is the first time, not before now, at which one more request
// fits every limit given the reservations under each (times[i], sorted).
// Reservations may lie in the future (other requests waiting for their
// slot); a request may take a free slot before them, so a chat held back
// by its own limit does not hold back the token's other chats. The
// candidates are now and the end of each reservation's window; the last
// of them always fits.
func earliest(now int64, limits []store.SendLimit, times [][]int64) int64 {
	cands := []int64{now}
	for i, l := range limits {
		for _, t := range times[i] {
			if c := t + int64(l.Per); c > now {
				cands = append(cands, c)
			}
		}
	}
	slices.Sort(cands)
	for _, x := range slices.Compact(cands) {
		ok := true
		for i, l := range limits {
			if !fits(times[i], l, x) {
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

// fits reports whether a request at x keeps times (sorted) within l: with
// x added, no N+1 consecutive requests lie within a window of Per.
func fits(times []int64, l store.SendLimit, x int64) bool {
	all := insertSorted(times, x)
	first, _ := slices.BinarySearch(all, x)
	last := first
	for last+1 < len(all) && all[last+1] == x {
		last++
	}
	// Only the runs of N+1 that hold an x can be new.
	for j := max(0, first-l.N); j <= last && j+l.N < len(all); j++ {
		if all[j+l.N]-all[j] < int64(l.Per) {
			return false
		}
	}
	return true
}

// insertSorted returns a new slice: times with x in its place.
func insertSorted(times []int64, x int64) []int64 {
	i, _ := slices.BinarySearch(times, x)
	out := make([]int64, 0, len(times)+1)
	out = append(out, times[:i]...)
	out = append(out, x)
	return append(out, times[i:]...)
}

// packTimes is times as big-endian int64s.
func packTimes(times []int64) []byte {
	b := make([]byte, 0, 8*len(times))
	for _, t := range times {
		b = binary.BigEndian.AppendUint64(b, uint64(t))
	}
	return b
}

// unpackTimes reverses packTimes; a trailing partial value is dropped.
func unpackTimes(b []byte) []int64 {
	times := make([]int64, 0, len(b)/8)
	for ; len(b) >= 8; b = b[8:] {
		times = append(times, int64(binary.BigEndian.Uint64(b)))
	}
	return times
}
