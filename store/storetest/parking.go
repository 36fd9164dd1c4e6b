package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
)

// ParkingStore is what ParkingContract tests: a store.Parking and the
// Prune that bounds it.
type ParkingStore interface {
	store.Parking
	Prune(ctx context.Context) (int64, error)
}

// ParkingContract tests a store.Parking (gateways.Parking): bodies of any
// bytes (every byte value, invalid UTF-8, empty) round trip exactly; an id
// parked again keeps its first body; scopes are independent; Unpark of an
// id not parked is no error; Parked returns the lowest ids, by number, up
// to limit, and nothing for a limit <= 0; a body over store.MaxParkedBody
// or a scope over store.MaxMemoryKey bytes (or empty) is refused, the
// error naming the id, and nothing of that call is written; Prune forgets
// an update store.ParkedKeep after it was first parked (parking it again
// does not renew it) and keeps newer ones, uncounted. newStore returns a
// fresh, empty store on the clock now.
func ParkingContract(t *testing.T, newStore func(t *testing.T, now func() time.Time) ParkingStore) {
	t.Helper()
	clock := time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)
	p := newStore(t, func() time.Time { return clock })
	c := parkingCheck{t: t, p: p}

	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	first := map[int64][]byte{
		5:       every,
		3:       []byte("\xff\xfe\xc3(\x00{\"update_id\":3}\xed\xa0\x80"),
		9:       {},
		1 << 40: []byte(`{"update_id":1099511627776,"message":{"text":"é"}}`),
	}
	c.expect("bot:1", 10, map[int64][]byte{})
	c.park("bot:1", first)
	c.expect("bot:1", 10, first)

	// Parked again: the first body stays; a new id of the same call is kept.
	c.park("bot:1", map[int64][]byte{3: []byte("second"), 4: []byte("four")})
	first[4] = []byte("four")
	c.expect("bot:1", 10, first)

	// Scopes are independent.
	c.park("bot:2", map[int64][]byte{3: []byte("other scope")})
	c.unpark("bot:2", 5) // never parked there
	c.expect("bot:1", 10, first)
	c.unpark("bot:1", 3)
	c.unpark("bot:1", 3) // again: no error
	delete(first, 3)
	c.expect("bot:1", 10, first)
	c.expect("bot:2", 10, map[int64][]byte{3: []byte("other scope")})

	// The lowest ids, by number (not as text), up to limit.
	c.park("limit", map[int64][]byte{100: []byte("c"), 2: []byte("a"), 10: []byte("b"), -1: []byte("neg")})
	c.expect("limit", 3, map[int64][]byte{-1: []byte("neg"), 2: []byte("a"), 10: []byte("b")})
	c.expect("limit", 1, map[int64][]byte{-1: []byte("neg")})
	c.expect("limit", 0, map[int64][]byte{})
	c.expect("limit", -1, map[int64][]byte{})

	c.park("limit", map[int64][]byte{}) // no-op
	c.park("limit", nil)
	c.expect("limit", 10, map[int64][]byte{-1: []byte("neg"), 2: []byte("a"), 10: []byte("b"), 100: []byte("c")})

	parkingRefusals(c)
	parkingPrune(c, &clock)
}

// parkingRefusals: an oversize body or scope, or an empty scope, is
// refused with nothing of the call written; a body of exactly
// store.MaxParkedBody bytes is kept.
func parkingRefusals(c parkingCheck) {
	c.t.Helper()
	ctx := context.Background()
	big := bytes.Repeat([]byte{0xff}, store.MaxParkedBody)
	err := c.p.Park(ctx, "refused", map[int64][]byte{777: append(slices.Clip(big), 0), 778: []byte("small")})
	if err == nil || !strings.Contains(err.Error(), "777") {
		c.t.Errorf("Park of a body of %d bytes: %v; want an error naming update 777", store.MaxParkedBody+1, err)
	}
	c.expect("refused", 10, map[int64][]byte{})
	long := strings.Repeat("s", store.MaxMemoryKey+1)
	for _, scope := range []string{long, ""} {
		if err := c.p.Park(ctx, scope, map[int64][]byte{1: []byte("x")}); err == nil {
			c.t.Errorf("Park in a scope of %d bytes accepted", len(scope))
		}
		c.expect(scope, 10, map[int64][]byte{})
	}
	c.park("refused", map[int64][]byte{779: big})
	c.expect("refused", 10, map[int64][]byte{779: big})
	c.unpark("refused", 779)
}

// parkingPrune: Prune forgets what was first parked store.ParkedKeep ago,
// even when parked again since, and keeps the newer.
func parkingPrune(c parkingCheck, clock *time.Time) {
	c.t.Helper()
	c.park("age", map[int64][]byte{1: []byte("old")})
	*clock = clock.Add(store.ParkedKeep / 2)
	c.park("age", map[int64][]byte{1: []byte("old again"), 2: []byte("new")})
	*clock = clock.Add(store.ParkedKeep/2 + time.Minute)
	n, err := c.p.Prune(context.Background())
	if err != nil || n != 0 {
		c.t.Fatalf("Prune = %d, %v; want 0 (parked updates are not counted), nil", n, err)
	}
	c.expect("age", 10, map[int64][]byte{2: []byte("new")})
	c.expect("bot:2", 10, map[int64][]byte{})
}

// parkingCheck runs a store.Parking's methods, failing the test on errors.
type parkingCheck struct {
	t *testing.T
	p ParkingStore
}

func (c parkingCheck) park(scope string, updates map[int64][]byte) {
	c.t.Helper()
	if err := c.p.Park(context.Background(), scope, updates); err != nil {
		c.t.Fatalf("Park(%q, %d updates): %v", scope, len(updates), err)
	}
}

func (c parkingCheck) unpark(scope string, id int64) {
	c.t.Helper()
	if err := c.p.Unpark(context.Background(), scope, id); err != nil {
		c.t.Fatalf("Unpark(%q, %d): %v", scope, id, err)
	}
}

// expect fails unless Parked(scope, limit) is want, exactly.
func (c parkingCheck) expect(scope string, limit int, want map[int64][]byte) {
	c.t.Helper()
	got, err := c.p.Parked(context.Background(), scope, limit)
	if err != nil {
		c.t.Fatalf("Parked(%.20q, %d): %v", scope, limit, err)
	}
	if len(got) != len(want) {
		c.t.Fatalf("Parked(%.20q, %d) has ids %v; want %v", scope, limit, sortedIDs(got), sortedIDs(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok || !bytes.Equal(g, w) {
			c.t.Fatalf("Parked(%.20q, %d)[%d] = %s; want %s", scope, limit, id, brief(g, ok), brief(w, true))
		}
	}
}

func sortedIDs(m map[int64][]byte) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// brief shows a body's size and first bytes.
func brief(b []byte, ok bool) string {
	if !ok {
		return "missing"
	}
	return fmt.Sprintf("%d bytes %.24q", len(b), b)
}
