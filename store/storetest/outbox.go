package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
)

// OutboxStore is what OutboxContract tests: the outbox, the heartbeats it
// reads, and Prune.
type OutboxStore interface {
	store.Outbox
	store.Instances
	Pruner
}

// SendSlotContract tests a store.SendSlots shared by two handles (two
// connections, as two instances have) on one store and one clock:
// concurrent reservations from both never put more than N requests in any
// window of Per under a key, and none waits longer than the limit asks
// (a frozen clock: the waits are exactly the slots); a reservation under
// two keys fits both and is recorded under both; time moving on frees the
// slots; a limit without N or Per is refused. newPair must return two
// handles on one fresh store reading their time from now.
func SendSlotContract(t *testing.T, newPair func(t *testing.T, now func() time.Time) (store.SendSlots, store.SendSlots)) {
	t.Helper()
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	a, b := newPair(t, clock.Now)
	handles := []store.SendSlots{a, b}

	// 12 concurrent reservations, 3 a second: exactly three slots at each
	// of 0s, 1s, 2s and 3s from now.
	perChat := store.SendLimit{Key: "example:1:chat:5", N: 3, Per: time.Second}
	waits := reserveAll(t, handles, 12, func(int) []store.SendLimit { return []store.SendLimit{perChat} })
	want := []time.Duration{0, 0, 0, time.Second, time.Second, time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second,
		3 * time.Second, 3 * time.Second, 3 * time.Second}
	if !slices.Equal(waits, want) {
		t.Fatalf("12 concurrent reservations of 3 a second from two handles: waits %v; want %v", waits, want)
	}

	// A chat limit and the token's global limit together: 1 a second per
	// chat, 4 a second in all, 3 chats × 4 requests. Each key's slots fit
	// its limit, and the 12 requests take no longer than the chat limit
	// needs (4 slots a chat: 0s..3s).
	clock.Set(clusterEpoch.Add(time.Hour))
	all := store.SendLimit{Key: "example:1", N: 4, Per: time.Second}
	chats := []string{"example:1:chat:a", "example:1:chat:b", "example:1:chat:c"}
	waits2 := reserveAll(t, handles, 12, func(i int) []store.SendLimit {
		return []store.SendLimit{{Key: chats[i%3], N: 1, Per: time.Second}, all}
	})
	if most := MostInWindow(waits2, time.Second); most > all.N {
		t.Errorf("%d requests of the token in one second: %v; want at most %d", most, waits2, all.N)
	}
	if last := waits2[len(waits2)-1]; last > 3*time.Second {
		t.Errorf("the last of 12 requests waits %v; want at most 3s (4 slots for each of 3 chats)", last)
	}
	// Each chat's own slots: reserve one more in each and check that it
	// comes a second after that chat's last (the records are per key).
	for _, c := range chats {
		w, err := a.ReserveSend(ctx, store.SendLimit{Key: c, N: 1, Per: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if w < 4*time.Second-time.Second || w > 4*time.Second {
			t.Errorf("the 5th request to %s waits %v; want 3s..4s (a second after its 4th)", c, w)
		}
	}

	// Time moving on frees the slots.
	clock.Set(clusterEpoch.Add(2 * time.Hour))
	if w, err := b.ReserveSend(ctx, perChat, all); err != nil || w != 0 {
		t.Errorf("a reservation an hour later: %v, %v; want 0, nil", w, err)
	}
	for _, bad := range []store.SendLimit{{Key: "x", N: 0, Per: time.Second}, {Key: "x", N: 1}, {N: 1, Per: time.Second}} {
		if _, err := a.ReserveSend(ctx, bad); err == nil {
			t.Errorf("ReserveSend(%+v): no error; want a refusal", bad)
		}
	}
}

// reserveAll makes n concurrent reservations, alternating between the
// handles, the i-th under limits(i), and returns the waits sorted.
func reserveAll(t *testing.T, handles []store.SendSlots, n int, limits func(i int) []store.SendLimit) []time.Duration {
	t.Helper()
	var mu sync.Mutex
	var waits []time.Duration
	var wg sync.WaitGroup
	for i := range n {
		h := handles[i%len(handles)]
		wg.Go(func() {
			w, err := h.ReserveSend(context.Background(), limits(i)...)
			if err != nil {
				t.Errorf("ReserveSend: %v", err)
				return
			}
			mu.Lock()
			waits = append(waits, w)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(waits)
	return waits
}

// MostInWindow returns the most of times (offsets or instants as
// durations) that fall in one window [t, t+per): the busiest window starts
// at one of them.
func MostInWindow(times []time.Duration, per time.Duration) int {
	times = slices.Sorted(slices.Values(times))
	most := 0
	for i, t := range times {
		n := 0
		for _, u := range times[i:] {
			if u < t+per {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// OutboxContract tests a store.Outbox shared by two handles on one store
// and one clock: the pending replies of a composer with no heartbeat
// within ttl are claimed by concurrent claimers on both handles, each
// exactly once, oldest first, and only for their sender; a live
// composer's replies, sent and failed ones are never claimed; a claimed
// reply keeps its text, conversation and chunks done; an instance takes
// back its own replies written before it started (a restart under the
// same name); a claimer that dies in turn loses them to the next; Prune
// forgets replies past store.OutboxKeep. newPair must return two handles
// on one fresh store reading their time from now.
func OutboxContract(t *testing.T, newPair func(t *testing.T, now func() time.Time) (OutboxStore, OutboxStore)) {
	t.Helper()
	clock := NewClock(clusterEpoch)
	a, b := newPair(t, clock.Now)
	f := &outboxFixture{a: a, b: b, clock: clock, ttl: 15 * time.Second, sender: "example:777"}
	runSteps(t,
		contractStep{"replies written", f.writeReplies},
		contractStep{"nothing claimed within ttl", f.noClaimWithinTTL},
		contractStep{"concurrent claimers past ttl take each reply once", f.claimConcurrently},
		contractStep{"a dead claimer loses its replies to the next", f.claimFromDeadClaimer},
		contractStep{"a restarted instance takes back its own", f.claimAfterRestart},
		contractStep{"Prune forgets replies past OutboxKeep", f.pruneReplies},
	)
}

// outboxFixture is OutboxContract's state, shared by its steps: two
// handles on one store, its clock, and the replies written and claimed.
type outboxFixture struct {
	a, b   OutboxStore
	clock  *Clock
	ttl    time.Duration
	sender string
	// dead are the pending replies of the composer "dead" (no heartbeat
	// after the first); aliveID, sent and failed are replies never to be
	// claimed.
	dead                  []int64
	aliveID, sent, failed int64
	// got is who claimed each reply, after claimConcurrently.
	got map[int64]string
}

// beat records a heartbeat of the instance name, started at
// clusterEpoch, through s.
func (f *outboxFixture) beat(t *testing.T, s OutboxStore, name string) {
	t.Helper()
	if err := s.Heartbeat(context.Background(), store.Instance{Name: name, Started: clusterEpoch}); err != nil {
		t.Fatalf("Heartbeat(%s): %v", name, err)
	}
}

// add writes a reply of f.sender to chat by composer and returns its ID.
func (f *outboxFixture) add(t *testing.T, composer, chat, text string) int64 {
	t.Helper()
	id, err := f.a.AddReply(context.Background(), store.OutboxReply{Sender: f.sender, Gateway: "example", Chat: chat, Thread: "7", Text: text, Composer: composer})
	if err != nil {
		t.Fatalf("AddReply: %v", err)
	}
	return id
}

// writeReplies writes 20 pending replies of the composer dead (the first
// with 2 chunks done), one of the composer alive, a sent and a failed
// one of dead, and one of another sender.
func (f *outboxFixture) writeReplies(t *testing.T) {
	ctx := context.Background()
	a := f.a
	f.beat(t, a, "dead")
	f.beat(t, a, "alive")
	for i := range 20 {
		f.dead = append(f.dead, f.add(t, "dead", "42", "reply "+string(rune('a'+i))))
	}
	f.aliveID = f.add(t, "alive", "43", "still being sent")
	f.sent = f.add(t, "dead", "44", "sent already")
	f.failed = f.add(t, "dead", "45", "refused")
	if err := a.ReplyDone(ctx, f.dead[0], 2, store.ReplyPending); err != nil {
		t.Fatalf("ReplyDone: %v", err)
	}
	if err := a.ReplyDone(ctx, f.sent, 1, store.ReplySent); err != nil {
		t.Fatalf("ReplyDone: %v", err)
	}
	if err := a.ReplyDone(ctx, f.failed, 0, store.ReplyFailed); err != nil {
		t.Fatalf("ReplyDone: %v", err)
	}
	other, err := a.AddReply(ctx, store.OutboxReply{Sender: "example:888", Gateway: "example", Chat: "1", Text: "another bot's", Composer: "dead"})
	if err != nil {
		t.Fatal(err)
	}
	_ = other
}

// noClaimWithinTTL checks that within ttl of dead's heartbeat nothing is
// claimed.
func (f *outboxFixture) noClaimWithinTTL(t *testing.T) {
	f.clock.Set(clusterEpoch.Add(f.ttl - time.Second))
	f.beat(t, f.a, "alive")
	if got := claim(t, f.b, f.sender, "b", f.ttl, 100); len(got) != 0 {
		t.Fatalf("claimed %d replies of a composer seen %v ago; want none", len(got), f.ttl-time.Second)
	}
}

// claimConcurrently has four claimers on two handles, past ttl, take 3
// at a time until none is left: each of dead's pending replies is
// claimed exactly once, oldest first, with its fields, and no other
// reply is.
func (f *outboxFixture) claimConcurrently(t *testing.T) {
	f.clock.Set(clusterEpoch.Add(f.ttl + time.Second))
	f.beat(t, f.a, "alive")
	for _, n := range []string{"c1", "c2", "c3", "c4"} {
		f.beat(t, f.b, n)
	}
	var mu sync.Mutex
	f.got = map[int64]string{}
	var wg sync.WaitGroup
	for i, n := range []string{"c1", "c2", "c3", "c4"} {
		h := []OutboxStore{f.a, f.b}[i%2]
		wg.Go(func() { f.claimAll(t, h, n, &mu) })
	}
	wg.Wait()
	if len(f.got) != len(f.dead) {
		t.Errorf("%d replies claimed; want dead's %d pending ones", len(f.got), len(f.dead))
	}
	for _, id := range f.dead {
		if _, ok := f.got[id]; !ok {
			t.Errorf("reply %d not claimed", id)
		}
	}
	for _, id := range []int64{f.aliveID, f.sent, f.failed} {
		if _, ok := f.got[id]; ok {
			t.Errorf("reply %d claimed: a live composer's, a sent or a failed one", id)
		}
	}
}

// claimAll is the claimer n on h: it claims 3 replies at a time until
// none is left, checking each batch and recording its claims in f.got
// under mu.
func (f *outboxFixture) claimAll(t *testing.T, h OutboxStore, n string, mu *sync.Mutex) {
	for {
		rs, err := h.ClaimReplies(context.Background(), f.sender, n, f.ttl, clusterEpoch, 3)
		if err != nil {
			t.Errorf("ClaimReplies: %v", err)
			return
		}
		if len(rs) == 0 {
			return
		}
		if !slices.IsSortedFunc(rs, func(x, y store.OutboxReply) int { return int(x.ID - y.ID) }) {
			t.Errorf("claimed %v: not oldest first", rs)
		}
		mu.Lock()
		for _, r := range rs {
			if prev, ok := f.got[r.ID]; ok {
				t.Errorf("reply %d claimed by %s and %s", r.ID, prev, n)
			}
			f.got[r.ID] = n
			if r.Composer != n || r.Sender != f.sender || r.Gateway != "example" || r.Thread != "7" || r.State != store.ReplyPending {
				t.Errorf("claimed %+v by %s: want it %s's, of %s, pending, in thread 7", r, n, n, f.sender)
			}
			if r.ID == f.dead[0] && (r.Done != 2 || r.Text != "reply a" || r.Chat != "42") {
				t.Errorf("claimed %+v; want reply a to 42 with 2 chunks done", r)
			}
		}
		mu.Unlock()
	}
}

// claimFromDeadClaimer checks that a claimer that dies in turn (c1)
// loses its replies to the next; the others keep theirs.
func (f *outboxFixture) claimFromDeadClaimer(t *testing.T) {
	f.clock.Set(clusterEpoch.Add(2*f.ttl + 2*time.Second))
	for _, n := range []string{"c2", "c3", "c4", "alive"} {
		f.beat(t, f.b, n)
	}
	again := claim(t, f.a, f.sender, "c2", f.ttl, 100)
	var c1s int
	for _, id := range f.got {
		if id == "c1" {
			c1s++
		}
	}
	if len(again) != c1s {
		t.Errorf("c2 took %d replies from c1, gone; want c1's %d", len(again), c1s)
	}
}

// claimAfterRestart checks that an instance takes back its own pending
// replies written before it started (a restart under one name: those it
// claimed before too), not those written since, and only once.
func (f *outboxFixture) claimAfterRestart(t *testing.T) {
	want := []int64{f.add(t, "c3", "46", "before the restart")}
	for id, n := range f.got {
		if n == "c3" {
			want = append(want, id)
		}
	}
	slices.Sort(want)
	restart := clusterEpoch.Add(2*f.ttl + 3*time.Second)
	f.clock.Set(restart.Add(time.Second))
	f.beat(t, f.b, "c3")
	f.add(t, "c3", "47", "after the restart")
	for round := range 2 {
		mine, err := f.b.ClaimReplies(context.Background(), f.sender, "c3", f.ttl, restart, 100)
		if err != nil {
			t.Fatalf("ClaimReplies: %v", err)
		}
		ids := make([]int64, len(mine))
		for i, r := range mine {
			ids[i] = r.ID
		}
		if round == 1 {
			want = nil // a claimed reply is taken once
		}
		if !slices.Equal(ids, want) {
			t.Errorf("c3 after its restart (claim %d) took %v; want %v, its replies written before it", round+1, ids, want)
		}
	}
}

// pruneReplies checks that Prune forgets replies unchanged for
// OutboxKeep.
func (f *outboxFixture) pruneReplies(t *testing.T) {
	f.clock.Set(clusterEpoch.Add(store.OutboxKeep + time.Hour))
	if _, err := f.a.Prune(context.Background()); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	f.beat(t, f.a, "late")
	if left := claim(t, f.a, f.sender, "late", f.ttl, 100); len(left) != 0 {
		t.Errorf("after Prune past OutboxKeep, %d replies left to claim; want none", len(left))
	}
}

// claim is ClaimReplies with clusterEpoch as instance's start, failing
// the test on an error.
func claim(t *testing.T, s OutboxStore, sender, instance string, ttl time.Duration, max int) []store.OutboxReply {
	t.Helper()
	rs, err := s.ClaimReplies(context.Background(), sender, instance, ttl, clusterEpoch, max)
	if err != nil {
		t.Fatalf("ClaimReplies: %v", err)
	}
	return rs
}
