package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// WebhookContract tests store.Webhooks on two handles a and b (two
// instances on one database): of concurrent claims of one delivery one
// takes it and the others find it busy; a finished delivery is a
// duplicate for either handle; a released one is taken again; a stale
// unfinished one is taken over; an incident's thread is the first set.
// newPair must make both handles read their time from now.
func WebhookContract(t *testing.T, newPair func(t *testing.T, now func() time.Time) (a, b store.Webhooks)) {
	t.Helper()
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	a, b := newPair(t, clock.Now)
	const stale = time.Minute
	got := make([]record.WebhookClaim, 8)
	concurrently(a, b, len(got), func(i int, h store.Webhooks, inst string) {
		c, err := h.ClaimWebhookDelivery(ctx, "alerts", "d1", inst, stale)
		if err != nil {
			t.Errorf("ClaimWebhookDelivery: %v", err)
		}
		got[i] = c
	})
	taken := 0
	for _, c := range got {
		switch c {
		case record.WebhookTaken:
			taken++
		case record.WebhookBusy:
		default:
			t.Errorf("concurrent claim = %v; want taken or busy", c)
		}
	}
	if taken != 1 {
		t.Fatalf("concurrent claims took the delivery %d times; want 1 (%v)", taken, got)
	}
	// Whoever took it, finishing by the other instance changes nothing;
	// take it over once stale under a known holder.
	clock.Set(clock.Now().Add(stale))
	if c, err := b.ClaimWebhookDelivery(ctx, "alerts", "d1", "b", stale); err != nil || c != record.WebhookTaken {
		t.Fatalf("claim of a stale unfinished delivery = %v, %v; want taken", c, err)
	}
	if err := a.FinishWebhookDelivery(ctx, "alerts", "d1", "a"); err != nil {
		t.Fatalf("FinishWebhookDelivery by a non-holder: %v", err)
	}
	if c, err := a.ClaimWebhookDelivery(ctx, "alerts", "d1", "a", stale); err != nil || c != record.WebhookBusy {
		t.Fatalf("claim after a non-holder's finish = %v, %v; want busy", c, err)
	}
	if err := b.FinishWebhookDelivery(ctx, "alerts", "d1", "b"); err != nil {
		t.Fatalf("FinishWebhookDelivery: %v", err)
	}
	clock.Set(clock.Now().Add(2 * stale))
	for _, h := range []store.Webhooks{a, b} {
		if c, err := h.ClaimWebhookDelivery(ctx, "alerts", "d1", "a", stale); err != nil || c != record.WebhookDuplicate {
			t.Fatalf("claim of a finished delivery = %v, %v; want duplicate", c, err)
		}
	}
	if c, err := a.ClaimWebhookDelivery(ctx, "other", "d1", "a", stale); err != nil || c != record.WebhookTaken {
		t.Fatalf("same id on another webhook = %v, %v; want taken", c, err)
	}
	if err := a.ReleaseWebhookDelivery(ctx, "other", "d1", "a"); err != nil {
		t.Fatalf("ReleaseWebhookDelivery: %v", err)
	}
	if c, err := b.ClaimWebhookDelivery(ctx, "other", "d1", "b", stale); err != nil || c != record.WebhookTaken {
		t.Fatalf("claim of a released delivery = %v, %v; want taken", c, err)
	}
	webhookThreads(t, a, b, clock)
}

// webhookThreads: an incident's thread is the zero value until claimed;
// of concurrent claims one takes it and the others find the claim; the
// claimant's thread is recorded and read by both handles; a stale claim
// is taken over, a released one claimed again.
func webhookThreads(t *testing.T, a, b store.Webhooks, clock *Clock) {
	t.Helper()
	ctx := context.Background()
	const stale = time.Minute
	if th, err := b.WebhookThread(ctx, "alerts", "g1"); err != nil || th != (record.WebhookThread{}) {
		t.Fatalf("WebhookThread before any = %+v, %v; want none", th, err)
	}
	var mu sync.Mutex
	var takers []string
	concurrently(a, b, 8, func(_ int, h store.Webhooks, inst string) {
		th, ok, err := h.ClaimWebhookThread(ctx, "alerts", "g1", inst, stale)
		switch {
		case err != nil:
			t.Errorf("ClaimWebhookThread: %v", err)
		case ok:
			mu.Lock()
			takers = append(takers, inst)
			mu.Unlock()
		case th.Conv != "" || th.Opener == "":
			t.Errorf("a claim found %+v; want another's claim", th)
		}
	})
	if len(takers) != 1 {
		t.Fatalf("claims taken %v; want exactly one", takers)
	}
	other := map[string]store.Webhooks{"a": b, "b": a}[takers[0]]
	mine := map[string]store.Webhooks{"a": a, "b": b}[takers[0]]
	if th, err := other.SetWebhookThread(ctx, "alerts", "g1", "nobody", record.WebhookThread{Conv: "slack:C1:9.9"}); err != nil || th.Conv != "" {
		t.Fatalf("SetWebhookThread without the claim = %+v, %v; want nothing recorded", th, err)
	}
	want := record.WebhookThread{Conv: "chat:-100", ReplyTo: "42"}
	if th, err := mine.SetWebhookThread(ctx, "alerts", "g1", takers[0], want); err != nil || th != want {
		t.Fatalf("SetWebhookThread = %+v, %v; want %+v", th, err, want)
	}
	if th, err := other.WebhookThread(ctx, "alerts", "g1"); err != nil || th != want {
		t.Fatalf("WebhookThread = %+v, %v; want %+v", th, err, want)
	}
	clock.Set(clock.Now().Add(2 * stale))
	if th, ok, err := other.ClaimWebhookThread(ctx, "alerts", "g1", "c", stale); err != nil || ok || th != want {
		t.Fatalf("claim of a recorded thread = %+v, %v, %v; want the thread", th, ok, err)
	}
	if th, err := b.WebhookThread(ctx, "other", "g1"); err != nil || th != (record.WebhookThread{}) {
		t.Fatalf("WebhookThread of another webhook = %+v, %v; want none", th, err)
	}
	// A claim that never recorded a thread: taken over once stale.
	if _, ok, err := a.ClaimWebhookThread(ctx, "alerts", "g2", "a", stale); err != nil || !ok {
		t.Fatalf("claim g2 = %v, %v", ok, err)
	}
	if th, ok, err := b.ClaimWebhookThread(ctx, "alerts", "g2", "b", stale); err != nil || ok || th.Opener != "a" {
		t.Fatalf("claim of a young claim = %+v, %v, %v; want a's claim", th, ok, err)
	}
	clock.Set(clock.Now().Add(2 * stale))
	if _, ok, err := b.ClaimWebhookThread(ctx, "alerts", "g2", "b", stale); err != nil || !ok {
		t.Fatalf("claim of a stale claim = %v, %v; want taken over", ok, err)
	}
	if th, err := a.SetWebhookThread(ctx, "alerts", "g2", "a", record.WebhookThread{Conv: "slack:C1:1.1"}); err != nil || th.Conv != "" {
		t.Fatalf("SetWebhookThread of a claim taken over = %+v, %v; want nothing recorded", th, err)
	}
	if err := b.ReleaseWebhookThread(ctx, "alerts", "g2", "b"); err != nil {
		t.Fatalf("ReleaseWebhookThread: %v", err)
	}
	if _, ok, err := a.ClaimWebhookThread(ctx, "alerts", "g2", "a", stale); err != nil || !ok {
		t.Fatalf("claim of a released claim = %v, %v; want taken", ok, err)
	}
}

// concurrently runs f n times at once, alternately on a (instance "a")
// and b ("b"), and waits for them.
func concurrently(a, b store.Webhooks, n int, f func(i int, h store.Webhooks, inst string)) {
	var wg sync.WaitGroup
	for i := range n {
		h, inst := a, "a"
		if i%2 == 1 {
			h, inst = b, "b"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i, h, inst)
		}()
	}
	wg.Wait()
}
