package storetest

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
)

// Pruner is a store's retention pruning (store.Store.Prune).
type Pruner interface {
	Prune(ctx context.Context) (int64, error)
}

// SlotStore is what ScheduleSlotContract tests.
type SlotStore interface {
	store.ScheduleSlots
	Pruner
}

// InstanceStore is what InstanceContract tests.
type InstanceStore interface {
	store.Instances
	Pruner
}

// clusterEpoch is where the cluster contracts' clocks start.
var clusterEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ScheduleSlotContract tests a store.ScheduleSlots: of 100 concurrent
// claims of one slot exactly one wins; a claimed slot stays claimed, for its
// instance too; slots and schedules are independent; Prune forgets slots
// older than store.SlotKeep. newSlots must make the store read its time
// from now.
func ScheduleSlotContract(t *testing.T, newSlots func(t *testing.T, now func() time.Time) SlotStore) {
	t.Helper()
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newSlots(t, clock.Now)
	slot := clusterEpoch.Add(time.Minute)

	var won atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.ClaimScheduleSlot(ctx, "beat", slot, "instance-"+string(rune('a'+i%26)))
			if err != nil {
				errs <- err
				return
			}
			if ok {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("ClaimScheduleSlot: %v", err)
	}
	if n := won.Load(); n != 1 {
		t.Fatalf("100 concurrent claims of one slot: %d won, want exactly 1", n)
	}
	claim := func(name string, slot time.Time, inst string, want bool) {
		t.Helper()
		if ok, err := s.ClaimScheduleSlot(ctx, name, slot, inst); err != nil || ok != want {
			t.Fatalf("ClaimScheduleSlot(%q, %v, %q) = %v, %v; want %v", name, slot, inst, ok, err, want)
		}
	}
	for _, inst := range []string{"instance-a", "instance-b", "other"} {
		claim("beat", slot, inst, false) // claimed: by anyone, the winner too
	}
	claim("beat", slot.Add(time.Second), "other", true) // the next slot
	claim("report", slot, "other", true)                // another schedule, same time
	claim("report", slot, "instance-a", false)

	// Prune forgets slots past SlotKeep, not newer ones.
	clock.Set(slot.Add(store.SlotKeep + time.Second))
	if _, err := s.Prune(ctx); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	claim("beat", slot, "late", true) // forgotten: claimable again
	clock.Set(slot.Add(store.SlotKeep + 2*time.Second))
	claim("beat", slot.Add(store.SlotKeep), "x", true)
	if _, err := s.Prune(ctx); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	claim("beat", slot.Add(store.SlotKeep), "y", false) // kept
}

// LeaseContract tests a store.Leases on the store's clock: a free lease is
// taken by one of many concurrent holders; another holder cannot take or
// renew it until it expires; the holder renews it; an expired lease is
// taken over, after which the old holder cannot renew it; a release frees it
// at once and a non-holder's release does nothing; leases are independent.
// newLeases must make the store read its time from now.
func LeaseContract(t *testing.T, newLeases func(t *testing.T, now func() time.Time) store.Leases) {
	t.Helper()
	clock := NewClock(clusterEpoch)
	f := &leaseFixture{l: newLeases(t, clock.Now), clock: clock, ttl: 15 * time.Second}
	runSteps(t,
		contractStep{"ttl 0 refused", f.zeroTTL},
		contractStep{"one of concurrent holders gets a free lease", f.concurrentAcquire},
		contractStep{"held and renewed", f.holdAndRenew},
		contractStep{"expired, taken over", f.takeOver},
		contractStep{"independent, and released at once", f.independentAndRelease},
	)
}

// leaseFixture is LeaseContract's state, shared by its steps: the store
// and its clock.
type leaseFixture struct {
	l     store.Leases
	clock *Clock
	ttl   time.Duration
}

// acquire checks that AcquireLease(name, holder) holds the lease or not
// (want).
func (f *leaseFixture) acquire(t *testing.T, name, holder string, want bool) {
	t.Helper()
	if held, err := f.l.AcquireLease(context.Background(), name, holder, f.ttl); err != nil || held != want {
		t.Fatalf("at %v: AcquireLease(%q, %q) = %v, %v; want %v", f.clock.Now().Sub(clusterEpoch), name, holder, held, err, want)
	}
}

// holders checks that LeaseHolders lists want, names, holders and
// expiries.
func (f *leaseFixture) holders(t *testing.T, want ...store.Lease) {
	t.Helper()
	got, err := f.l.LeaseHolders(context.Background())
	if err != nil {
		t.Fatalf("LeaseHolders: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("at %v: LeaseHolders = %+v; want %+v", f.clock.Now().Sub(clusterEpoch), got, want)
	}
	for i := range got {
		if got[i].Name != want[i].Name || got[i].Holder != want[i].Holder || !got[i].Expires.Equal(want[i].Expires) {
			t.Fatalf("at %v: LeaseHolders = %+v; want %+v", f.clock.Now().Sub(clusterEpoch), got, want)
		}
	}
}

// leaseAt is the time d after the clock's start.
func leaseAt(d time.Duration) time.Time { return clusterEpoch.Add(d) }

// zeroTTL checks that a lease for no time is refused and nothing held.
func (f *leaseFixture) zeroTTL(t *testing.T) {
	if _, err := f.l.AcquireLease(context.Background(), "receiver:1", "a", 0); err == nil {
		t.Fatal("AcquireLease with ttl 0: no error")
	}
	f.holders(t)
}

// concurrentAcquire checks that of many concurrent holders of a free
// lease exactly one gets it, and releases it.
func (f *leaseFixture) concurrentAcquire(t *testing.T) {
	ctx := context.Background()
	var won atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	for _, h := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			held, err := f.l.AcquireLease(ctx, "race", h, f.ttl)
			if err != nil {
				t.Errorf("AcquireLease(race, %s): %v", h, err)
			}
			if held {
				won.Add(1)
				winner.Store(h)
			}
		}()
	}
	wg.Wait()
	if n := won.Load(); n != 1 {
		t.Fatalf("8 concurrent AcquireLease of a free lease: %d held it, want 1", n)
	}
	w := winner.Load().(string)
	if err := f.l.ReleaseLease(ctx, "race", w); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
}

// holdAndRenew checks that another holder cannot take a held lease
// before it expires, the holder renews it, and a non-holder's release
// does nothing.
func (f *leaseFixture) holdAndRenew(t *testing.T) {
	f.acquire(t, "receiver:1", "a", true)
	f.acquire(t, "receiver:1", "b", false)
	f.holders(t, store.Lease{Name: "receiver:1", Holder: "a", Expires: leaseAt(f.ttl)})

	f.clock.Set(leaseAt(10 * time.Second))
	f.acquire(t, "receiver:1", "b", false) // not expired
	f.acquire(t, "receiver:1", "a", true)  // renewed: expires at 25s
	f.holders(t, store.Lease{Name: "receiver:1", Holder: "a", Expires: leaseAt(25 * time.Second)})
	f.clock.Set(leaseAt(20 * time.Second)) // past the first expiry, not the renewed one
	f.acquire(t, "receiver:1", "b", false)

	// A non-holder's release does nothing.
	if err := f.l.ReleaseLease(context.Background(), "receiver:1", "b"); err != nil {
		t.Fatalf("ReleaseLease by a non-holder: %v", err)
	}
	f.acquire(t, "receiver:1", "b", false)
}

// takeOver checks that an expired lease is taken over, and the old
// holder cannot renew it.
func (f *leaseFixture) takeOver(t *testing.T) {
	f.clock.Set(leaseAt(25 * time.Second))
	f.holders(t)
	f.acquire(t, "receiver:1", "b", true)
	f.acquire(t, "receiver:1", "a", false)
	f.holders(t, store.Lease{Name: "receiver:1", Holder: "b", Expires: leaseAt(40 * time.Second)})
}

// independentAndRelease checks that leases are independent, and that a
// release frees the lease at once.
func (f *leaseFixture) independentAndRelease(t *testing.T) {
	f.acquire(t, "other:1", "a", true)
	f.holders(t, store.Lease{Name: "other:1", Holder: "a", Expires: leaseAt(40 * time.Second)},
		store.Lease{Name: "receiver:1", Holder: "b", Expires: leaseAt(40 * time.Second)})

	// A release frees the lease at once.
	if err := f.l.ReleaseLease(context.Background(), "receiver:1", "b"); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	f.holders(t, store.Lease{Name: "other:1", Holder: "a", Expires: leaseAt(40 * time.Second)})
	f.acquire(t, "receiver:1", "a", true)
	f.holders(t, store.Lease{Name: "other:1", Holder: "a", Expires: leaseAt(40 * time.Second)},
		store.Lease{Name: "receiver:1", Holder: "a", Expires: leaseAt(40 * time.Second)})
}

// InstanceContract tests a store.Instances on the store's clock: a
// heartbeat registers or refreshes an instance; Instances lists those seen
// within the window, by name; RemoveInstance forgets one; Prune forgets
// those not seen for store.InstanceKeep. newInstances must make the store
// read its time from now.
func InstanceContract(t *testing.T, newInstances func(t *testing.T, now func() time.Time) InstanceStore) {
	t.Helper()
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newInstances(t, clock.Now)
	const window = 30 * time.Second
	at := func(d time.Duration) time.Time { return clusterEpoch.Add(d) }
	beat := func(name, version string, started time.Time) {
		t.Helper()
		// LastSeen is the store's to set.
		if err := s.Heartbeat(ctx, store.Instance{Name: name, Version: version, Started: started, LastSeen: at(-time.Hour)}); err != nil {
			t.Fatalf("Heartbeat(%s): %v", name, err)
		}
	}
	list := func(window time.Duration, want ...store.Instance) {
		t.Helper()
		got, err := s.Instances(ctx, window)
		if err != nil {
			t.Fatalf("Instances: %v", err)
		}
		if !slices.EqualFunc(got, want, func(a, b store.Instance) bool {
			return a.Name == b.Name && a.Version == b.Version && a.Started.Equal(b.Started) && a.LastSeen.Equal(b.LastSeen)
		}) {
			t.Fatalf("at %v: Instances(%v) = %+v; want %+v", clock.Now().Sub(clusterEpoch), window, got, want)
		}
	}
	list(window)
	beat("host-b-7", "v1.2.0", at(-time.Minute))
	beat("host-a-9", "v1.2.0", at(-2*time.Minute))
	list(window,
		store.Instance{Name: "host-a-9", Version: "v1.2.0", Started: at(-2 * time.Minute), LastSeen: at(0)},
		store.Instance{Name: "host-b-7", Version: "v1.2.0", Started: at(-time.Minute), LastSeen: at(0)})

	clock.Set(at(20 * time.Second))
	beat("host-a-9", "v1.3.0", at(10*time.Second)) // restarted with a new version
	clock.Set(at(35 * time.Second))
	list(window, store.Instance{Name: "host-a-9", Version: "v1.3.0", Started: at(10 * time.Second), LastSeen: at(20 * time.Second)})
	list(time.Hour,
		store.Instance{Name: "host-a-9", Version: "v1.3.0", Started: at(10 * time.Second), LastSeen: at(20 * time.Second)},
		store.Instance{Name: "host-b-7", Version: "v1.2.0", Started: at(-time.Minute), LastSeen: at(0)})

	if err := s.RemoveInstance(ctx, "host-a-9"); err != nil {
		t.Fatalf("RemoveInstance: %v", err)
	}
	if err := s.RemoveInstance(ctx, "never-seen"); err != nil {
		t.Fatalf("RemoveInstance of an unknown instance: %v", err)
	}
	list(time.Hour, store.Instance{Name: "host-b-7", Version: "v1.2.0", Started: at(-time.Minute), LastSeen: at(0)})

	// Prune forgets an instance not seen for InstanceKeep.
	clock.Set(at(store.InstanceKeep - time.Second))
	beat("host-c-1", "v1.3.0", at(0))
	if _, err := s.Prune(ctx); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	list(2*store.InstanceKeep, store.Instance{Name: "host-b-7", Version: "v1.2.0", Started: at(-time.Minute), LastSeen: at(0)},
		store.Instance{Name: "host-c-1", Version: "v1.3.0", Started: at(0), LastSeen: at(store.InstanceKeep - time.Second)})
	clock.Set(at(store.InstanceKeep + time.Second))
	if _, err := s.Prune(ctx); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	list(2*store.InstanceKeep, store.Instance{Name: "host-c-1", Version: "v1.3.0", Started: at(0), LastSeen: at(store.InstanceKeep - time.Second)})
}

// InstanceClaimContract tests store.Instances.ClaimInstance on the store's
// clock: a name without a row, or whose row is the same process's, or was
// last seen ttl or longer ago, is claimed (the row is then the claimer's);
// a name another process heartbeat within ttl is not, and the claim
// returns that process's row unchanged; of concurrent claims of a fresh
// name by different processes one wins. Instances and Heartbeat carry the
// process id.
func InstanceClaimContract(t *testing.T, newInstances func(t *testing.T, now func() time.Time) InstanceStore) {
	t.Helper()
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newInstances(t, clock.Now)
	const ttl = 15 * time.Second
	at := func(d time.Duration) time.Time { return clusterEpoch.Add(d) }
	in := func(process string) store.Instance {
		return store.Instance{Name: "web", Version: "v1", Process: process, Started: clock.Now()}
	}
	claim := func(process string, want bool) store.Instance {
		t.Helper()
		held, ok, err := s.ClaimInstance(ctx, in(process), ttl)
		if err != nil || ok != want {
			t.Fatalf("at %v: ClaimInstance(web, %s) = %v, %v; want %v", clock.Now().Sub(clusterEpoch), process, ok, err, want)
		}
		return held
	}
	seen := func() store.Instance {
		t.Helper()
		got, err := s.Instances(ctx, time.Hour)
		if err != nil || len(got) != 1 {
			t.Fatalf("Instances = %+v, %v; want the one row of web", got, err)
		}
		return got[0]
	}

	claim("p1", true)
	if got := seen(); got.Process != "p1" || !got.LastSeen.Equal(at(0)) {
		t.Fatalf("after p1's claim: %+v; want process p1 seen at 0", got)
	}
	clock.Set(at(5 * time.Second))
	held := claim("p2", false)
	if held.Process != "p1" || !held.LastSeen.Equal(at(0)) {
		t.Fatalf("p2's refused claim returned %+v; want p1's row, seen at 0", held)
	}
	if got := seen(); got.Process != "p1" || !got.LastSeen.Equal(at(0)) {
		t.Fatalf("p2's refused claim changed the row: %+v", got)
	}
	claim("p1", true) // its own: renewed
	clock.Set(at(5*time.Second + ttl - time.Millisecond))
	claim("p2", false)
	if err := s.Heartbeat(ctx, in("p1")); err != nil {
		t.Fatalf("Heartbeat: %v", err)
	}
	if got := seen(); got.Process != "p1" || !got.LastSeen.Equal(clock.Now()) {
		t.Fatalf("after p1's heartbeat: %+v; want process p1 seen now", got)
	}
	clock.Set(clock.Now().Add(ttl)) // p1 stopped heartbeating: aged out
	claim("p2", true)
	if got := seen(); got.Process != "p2" {
		t.Fatalf("after p2's claim of the aged-out name: %+v; want process p2", got)
	}
	if err := s.RemoveInstance(ctx, "web"); err != nil {
		t.Fatalf("RemoveInstance: %v", err)
	}
	concurrentInstanceClaims(t, s, in, ttl)
}

// concurrentInstanceClaims: of 20 concurrent claims of a fresh name by different
// processes, one wins.
func concurrentInstanceClaims(t *testing.T, s InstanceStore, in func(process string) store.Instance, ttl time.Duration) {
	t.Helper()
	ctx := context.Background()
	var won atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := s.ClaimInstance(ctx, in("q"+string(rune('a'+i))), ttl)
			if err != nil {
				errs <- err
				return
			}
			if ok {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("ClaimInstance: %v", err)
	}
	if n := won.Load(); n != 1 {
		t.Fatalf("20 concurrent claims of one fresh name: %d won, want exactly 1", n)
	}
}
