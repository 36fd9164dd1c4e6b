package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store"
)

// InboxStore is what InboxContract tests.
type InboxStore interface {
	store.Inbox
	Pruner
}

// InboxContract tests a store.Inbox shared by two handles a and b (two
// instances on one database) on the store's clock: a redelivery is a
// no-op; a conversation's entries are claimed one at a time, oldest first,
// whichever handle claims; a claim is renewed, and an expired one taken
// over with its stage, after which the old holder can neither record nor
// finish; a reservation keeps an entry for its receiver until it expires;
// concurrent claimers on both handles never hold one conversation at once
// and see each conversation in order; a cancel marks the live claim of a
// conversation for its holder; a put and a cancel wake a watcher on the
// other handle; Prune forgets done entries after store.InboxKeep. newInbox must
// make both handles read their time from now.
func InboxContract(t *testing.T, newInbox func(t *testing.T, now func() time.Time) (a, b InboxStore)) {
	t.Helper()
	clock := NewClock(clusterEpoch)
	a, b := newInbox(t, clock.Now)
	f := &inboxFixture{a: a, b: b, clock: clock, ttl: 15 * time.Second, gws: []string{"alpha", "beta"}}
	runSteps(t,
		contractStep{"order in a conversation across the handles", f.claimInOrder},
		contractStep{"a cancel reaches the holder", f.cancelReachesHolder},
		contractStep{"a renewed claim holds, an expired one is taken over", f.renewAndTakeOver},
		contractStep{"a reservation keeps an entry for its receiver", f.reservation},
		contractStep{"concurrent claims", func(t *testing.T) { concurrentClaims(t, f.a, f.b, f.gws) }},
		contractStep{"a put and a cancel wake a watcher", func(t *testing.T) { watch(t, f.a, f.b) }},
		contractStep{"Prune forgets done entries after InboxKeep", f.pruneInbox},
	)
}

// inboxFixture is InboxContract's state, shared by its steps: two
// handles on one store, its clock, and the entries claimed so far.
type inboxFixture struct {
	a, b  InboxStore
	clock *Clock
	ttl   time.Duration
	gws   []string // the gateways the claimers run
	// e2 and e3 are claimInOrder's second and third claims (C1:1.5 by b,
	// 1:11 by b).
	e2, e3 store.InboxEntry
}

// put puts the entry key of conv through s and checks that it was added
// (want) or recognised as a redelivery.
func (f *inboxFixture) put(t *testing.T, s InboxStore, gw, key, conv string, want bool) {
	t.Helper()
	e := store.InboxEntry{Gateway: gw, Key: key, Conv: conv, Data: []byte("data of " + key), Receiver: "a"}
	if id, added, err := s.PutInbox(context.Background(), e, 0); err != nil || added != want || (id != 0) != want {
		t.Fatalf("PutInbox(%s %s) = %d, %v, %v; want added %v", gw, key, id, added, err, want)
	}
}

// claim claims an entry through s for holder and checks that it is
// wantKey ("" for none).
func (f *inboxFixture) claim(t *testing.T, s InboxStore, holder, wantKey string) store.InboxEntry {
	t.Helper()
	e, ok, err := s.ClaimInbox(context.Background(), holder, f.gws, f.ttl)
	if err != nil {
		t.Fatalf("ClaimInbox(%s): %v", holder, err)
	}
	if got := map[bool]string{true: e.Key}[ok]; got != wantKey {
		t.Fatalf("at %v: ClaimInbox(%s) claimed %q; want %q", f.clock.Now().Sub(clusterEpoch), holder, got, wantKey)
	}
	return e
}

// finish finishes e through s as holder.
func (f *inboxFixture) finish(t *testing.T, s InboxStore, e store.InboxEntry, holder string) {
	t.Helper()
	if err := s.FinishInbox(context.Background(), e.ID, holder); err != nil {
		t.Fatalf("FinishInbox(%s, %s): %v", e.Key, holder, err)
	}
}

// cancelled checks the IDs of holder's cancelled claims, through s.
func (f *inboxFixture) cancelled(t *testing.T, s InboxStore, holder string, want ...int64) {
	t.Helper()
	ids, err := s.CancelledInbox(context.Background(), holder)
	if err != nil || fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("CancelledInbox(%s) = %v, %v; want %v", holder, ids, err, want)
	}
}

// claimInOrder checks the order in a conversation, across the handles;
// a redelivery is a no-op.
func (f *inboxFixture) claimInOrder(t *testing.T) {
	a, b := f.a, f.b
	f.put(t, a, "alpha", "1:10", "alpha:1", true)
	f.put(t, a, "alpha", "1:11", "alpha:1", true)
	f.put(t, b, "alpha", "1:10", "alpha:1", false) // redelivered, to the other handle
	f.put(t, b, "beta", "C1:1.5", "beta:C1", true)
	f.put(t, a, "gamma", "9:1", "gamma:9", true) // a gateway no claimer runs
	e1 := f.claim(t, a, "a", "1:10")
	if string(e1.Data) != "data of 1:10" || e1.Conv != "alpha:1" || e1.Gateway != "alpha" || e1.Receiver != "a" || e1.Stage != 0 {
		t.Fatalf("claimed entry = %+v", e1)
	}
	f.e2 = f.claim(t, b, "b", "C1:1.5") // alpha:1's next waits for its first
	f.claim(t, b, "b", "")
	f.finish(t, a, e1, "a")
	f.put(t, a, "alpha", "1:10", "alpha:1", false) // done entries still recognise a redelivery
	f.e3 = f.claim(t, b, "b", "1:11")
	f.claim(t, a, "a", "")
	f.finish(t, b, f.e2, "b")
}

// cancelReachesHolder checks that /cancel on one instance reaches the
// holder of the conversation's turn.
func (f *inboxFixture) cancelReachesHolder(t *testing.T) {
	f.cancelled(t, f.b, "b")
	for conv, want := range map[string]bool{"beta:C1": false, "alpha:none": false, "alpha:1": true} {
		if ok, err := f.a.CancelInbox(context.Background(), conv); err != nil || ok != want {
			t.Fatalf("CancelInbox(%s) = %v, %v; want %v", conv, ok, err, want)
		}
	}
	f.cancelled(t, f.b, "b", f.e3.ID)
	f.cancelled(t, f.a, "a")
}

// renewAndTakeOver checks that a renewed claim holds; expired, it is
// taken over with its stage, and the old holder can neither record nor
// finish; released, it is claimable at once, its stage kept.
func (f *inboxFixture) renewAndTakeOver(t *testing.T) {
	ctx := context.Background()
	a, b, e3 := f.a, f.b, f.e3
	if err := b.SetInboxStage(ctx, e3.ID, "b", 2); err != nil {
		t.Fatalf("SetInboxStage: %v", err)
	}
	if err := a.SetInboxStage(ctx, e3.ID, "a", 3); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("SetInboxStage by a non-holder = %v; want ErrNotHeld", err)
	}
	f.clock.Set(clusterEpoch.Add(10 * time.Second))
	if err := b.RenewInbox(ctx, "b", []int64{e3.ID}, f.ttl); err != nil {
		t.Fatalf("RenewInbox: %v", err)
	}
	f.clock.Set(clusterEpoch.Add(20 * time.Second)) // past the first claim's expiry, not the renewal's
	f.claim(t, a, "a", "")
	f.clock.Set(clusterEpoch.Add(25 * time.Second)) // the renewal's expiry
	taken := f.claim(t, a, "a", "1:11")
	if taken.ID != e3.ID || taken.Stage != 2 {
		t.Fatalf("taken over: %+v; want entry %d at stage 2", taken, e3.ID)
	}
	if err := b.SetInboxStage(ctx, e3.ID, "b", 3); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("SetInboxStage by the old holder = %v; want ErrNotHeld", err)
	}
	if err := b.FinishInbox(ctx, e3.ID, "b"); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("FinishInbox by the old holder = %v; want ErrNotHeld", err)
	}
	// Released, it is claimable at once, its stage kept.
	if err := a.ReleaseInbox(ctx, e3.ID, "a"); err != nil {
		t.Fatalf("ReleaseInbox: %v", err)
	}
	if again := f.claim(t, b, "b", "1:11"); again.Stage != 2 {
		t.Fatalf("claimed after a release: stage %d; want 2", again.Stage)
	}
	f.finish(t, b, e3, "b")
}

// reservation checks that a reservation keeps an entry for its receiver
// until it expires, and that the receiver claims it at once.
func (f *inboxFixture) reservation(t *testing.T) {
	ctx := context.Background()
	a, b := f.a, f.b
	if _, _, err := a.PutInbox(ctx, store.InboxEntry{Gateway: "beta", Key: "C2:1", Conv: "beta:C2", Data: []byte("x"), Files: 1, Receiver: "a"}, f.ttl); err != nil {
		t.Fatalf("PutInbox reserved: %v", err)
	}
	f.claim(t, b, "b", "")
	if err := a.RenewInbox(ctx, "a", []int64{-1, 0}, f.ttl); err != nil {
		t.Fatalf("RenewInbox of unknown ids: %v", err)
	}
	f.clock.Set(clusterEpoch.Add(25*time.Second + f.ttl))
	r := f.claim(t, b, "b", "C2:1") // the receiver is gone: taken over
	if r.Files != 1 || r.Receiver != "a" {
		t.Fatalf("reserved entry = %+v", r)
	}
	f.finish(t, b, r, "b")
	if _, _, err := a.PutInbox(ctx, store.InboxEntry{Gateway: "beta", Key: "C2:2", Conv: "beta:C2", Data: []byte("x"), Receiver: "a"}, f.ttl); err != nil {
		t.Fatalf("PutInbox reserved: %v", err)
	}
	f.finish(t, a, f.claim(t, a, "a", "C2:2"), "a") // its receiver claims it at once
}

// pruneInbox checks that Prune forgets done entries after InboxKeep:
// the key is new again; a pending entry is kept.
func (f *inboxFixture) pruneInbox(t *testing.T) {
	f.clock.Set(f.clock.Now().Add(store.InboxKeep + time.Second))
	for _, s := range []InboxStore{f.a, f.b} {
		if _, err := s.Prune(context.Background()); err != nil {
			t.Fatalf("Prune: %v", err)
		}
	}
	f.put(t, f.a, "alpha", "1:10", "alpha:1", true)
	f.put(t, f.a, "gamma", "9:1", "gamma:9", false) // pending: kept
}

// concurrentClaims has four claimers on each handle take 60 entries of six
// conversations: no two hold one conversation at once, each entry is run
// once, and each conversation's entries in the order they were put.
func concurrentClaims(t *testing.T, a, b InboxStore, gws []string) {
	t.Helper()
	ctx := context.Background()
	const convs, per = 6, 10
	for i := range per {
		for c := range convs {
			e := store.InboxEntry{Gateway: "alpha", Key: fmt.Sprintf("c%d:%d", c, i), Conv: fmt.Sprintf("alpha:c%d", c),
				Data: []byte(fmt.Sprint(i)), Receiver: "a"}
			if _, _, err := a.PutInbox(ctx, e, 0); err != nil {
				t.Fatalf("PutInbox: %v", err)
			}
		}
	}
	var mu sync.Mutex
	held := map[string]string{}
	seen := map[string][]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		s, holder := a, fmt.Sprintf("a%d", w)
		if w%2 == 1 {
			s, holder = b, fmt.Sprintf("b%d", w)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e, ok, err := s.ClaimInbox(ctx, holder, gws, time.Hour)
				if err != nil {
					errs <- err
					return
				}
				if !ok {
					mu.Lock()
					n := 0
					for _, v := range seen {
						n += len(v)
					}
					mu.Unlock()
					if n == convs*per {
						return
					}
					continue
				}
				mu.Lock()
				if other, busy := held[e.Conv]; busy {
					mu.Unlock()
					errs <- fmt.Errorf("%s claimed %s while %s held %s", holder, e.Key, other, e.Conv)
					return
				}
				held[e.Conv] = holder
				seen[e.Conv] = append(seen[e.Conv], string(e.Data))
				delete(held, e.Conv) // before FinishInbox: the next claim may follow it at once
				mu.Unlock()
				if err := s.FinishInbox(ctx, e.ID, holder); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for c := range convs {
		got := seen[fmt.Sprintf("alpha:c%d", c)]
		want := make([]string, per)
		for i := range want {
			want[i] = fmt.Sprint(i)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("conversation c%d ran %v; want %v, each once, in order", c, got, want)
		}
	}
}

// watch checks that a put on b wakes a watcher on a, and a cancel on b
// wakes it with store.InboxCancel.
func watch(t *testing.T, a, b InboxStore) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	woken := make(chan string, 64)
	done := make(chan error, 1)
	go func() {
		done <- a.WatchInbox(ctx, func(what string) {
			select {
			case woken <- what:
			default:
			}
		})
	}()
	// The watcher may not listen yet when a put is made: put until woken.
	n := 0
	testutil.WaitFor(t, "a put on one handle to wake a watcher on the other", func() bool {
		n++
		e := store.InboxEntry{Gateway: "alpha", Key: fmt.Sprintf("w:%d", n), Conv: "alpha:w", Data: []byte("w"), Receiver: "b"}
		if _, _, err := b.PutInbox(context.Background(), e, 0); err != nil {
			t.Fatalf("PutInbox: %v", err)
		}
		select {
		case what := <-woken:
			return what == ""
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	e, ok, err := b.ClaimInbox(context.Background(), "b", []string{"alpha"}, time.Hour)
	if err != nil || !ok {
		t.Fatalf("ClaimInbox = %+v, %v, %v", e, ok, err)
	}
	if ok, err := b.CancelInbox(context.Background(), e.Conv); err != nil || !ok {
		t.Fatalf("CancelInbox = %v, %v", ok, err)
	}
	testutil.WaitFor(t, "a cancel to wake the watcher with InboxCancel", func() bool {
		select {
		case what := <-woken:
			return what == store.InboxCancel
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("WatchInbox after its context ended: %v", err)
	}
}
