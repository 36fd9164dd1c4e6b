package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
)

// MemoryStore is what MemoryContract tests: a store.Memory and the Prune
// that bounds it.
type MemoryStore interface {
	store.Memory
	Prune(ctx context.Context) (int64, error)
}

// MemoryContract tests a store.Memory (gateways.Memory): a key never
// remembered reads false; a remembered one true, in its scope only, and
// after the store is opened again (reopen, when not nil, closes the store
// and opens the same one); Remember is idempotent and renews the key;
// Prune forgets a key store.MemoryKeep after its latest Remember, whatever
// the history retention, and the oldest keys of a scope past max; a scope
// or key over store.MaxMemoryKey bytes, or empty, is refused. newStore
// returns a fresh, empty store on the clock now that keeps at most max
// keys a scope.
func MemoryContract(t *testing.T, newStore func(t *testing.T, now func() time.Time, max int) MemoryStore, reopen func(t *testing.T, m MemoryStore) MemoryStore) {
	t.Helper()
	ctx := context.Background()
	clock := time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	m := newStore(t, now, 3)
	remembered := func(scope, key string) bool {
		t.Helper()
		ok, err := m.Remembered(ctx, scope, key)
		if err != nil {
			t.Fatalf("Remembered(%q, %q): %v", scope, key, err)
		}
		return ok
	}
	remember := func(scope, key string) {
		t.Helper()
		if err := m.Remember(ctx, scope, key); err != nil {
			t.Fatalf("Remember(%q, %q): %v", scope, key, err)
		}
	}
	if remembered("slack.threads", "C1:1.1") {
		t.Fatal("a key never remembered reads true")
	}
	remember("slack.threads", "C1:1.1")
	remember("slack.threads", "C1:1.1") // idempotent
	if !remembered("slack.threads", "C1:1.1") {
		t.Fatal("a remembered key reads false")
	}
	if remembered("other.scope", "C1:1.1") || remembered("slack.threads", "C1:1.2") {
		t.Fatal("a key is remembered in another scope, or another key in its scope")
	}
	for _, bad := range [][2]string{{"", "k"}, {"s", ""}, {strings.Repeat("s", store.MaxMemoryKey+1), "k"}, {"s", strings.Repeat("k", store.MaxMemoryKey+1)}} {
		if err := m.Remember(ctx, bad[0], bad[1]); err == nil {
			t.Errorf("Remember of a scope of %d bytes and a key of %d accepted", len(bad[0]), len(bad[1]))
		}
	}
	if reopen != nil {
		m = reopen(t, m)
		if !remembered("slack.threads", "C1:1.1") {
			t.Fatal("a remembered key is forgotten when the store is opened again")
		}
	}

	// Age: a key renewed within MemoryKeep stays; one not renewed goes.
	remember("age", "old")
	remember("age", "renewed")
	clock = clock.Add(store.MemoryKeep / 2)
	remember("age", "renewed")
	clock = clock.Add(store.MemoryKeep/2 + time.Minute)
	if _, err := m.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	if remembered("age", "old") || !remembered("age", "renewed") {
		t.Errorf("after MemoryKeep: old %v (want false), renewed %v (want true)", remembered("age", "old"), remembered("age", "renewed"))
	}

	// Count: past max keys in a scope the oldest go, other scopes stay.
	for i := range 5 {
		clock = clock.Add(time.Second)
		remember("count", fmt.Sprint("k", i))
	}
	remember("count2", "kept")
	if _, err := m.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true, true, true} {
		if got := remembered("count", fmt.Sprint("k", i)); got != want {
			t.Errorf("after Prune with max 3: k%d remembered %v, want %v", i, got, want)
		}
	}
	if !remembered("count2", "kept") || !remembered("age", "renewed") {
		t.Error("Prune of a full scope forgot another scope's keys")
	}
}
