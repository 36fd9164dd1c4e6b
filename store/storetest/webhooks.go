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
	var wg sync.WaitGroup
	got := make([]record.WebhookClaim, 8)
	for i := range got {
		h, inst := a, "a"
		if i%2 == 1 {
			h, inst = b, "b"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := h.ClaimWebhookDelivery(ctx, "alerts", "d1", inst, stale)
			if err != nil {
				t.Errorf("ClaimWebhookDelivery: %v", err)
			}
			got[i] = c
		}()
	}
	wg.Wait()
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
	webhookThreads(t, a, b)
}

// webhookThreads: an incident's thread is "" until set, then the first
// set for both handles.
func webhookThreads(t *testing.T, a, b store.Webhooks) {
	t.Helper()
	ctx := context.Background()
	if conv, err := b.WebhookThread(ctx, "alerts", "g1"); err != nil || conv != "" {
		t.Fatalf("WebhookThread before any = %q, %v; want \"\"", conv, err)
	}
	if conv, err := a.SetWebhookThread(ctx, "alerts", "g1", "slack:C1:1.1"); err != nil || conv != "slack:C1:1.1" {
		t.Fatalf("SetWebhookThread = %q, %v", conv, err)
	}
	if conv, err := b.SetWebhookThread(ctx, "alerts", "g1", "slack:C1:2.2"); err != nil || conv != "slack:C1:1.1" {
		t.Fatalf("second SetWebhookThread = %q, %v; want the first", conv, err)
	}
	if conv, err := b.WebhookThread(ctx, "alerts", "g1"); err != nil || conv != "slack:C1:1.1" {
		t.Fatalf("WebhookThread = %q, %v", conv, err)
	}
	if conv, err := b.WebhookThread(ctx, "other", "g1"); err != nil || conv != "" {
		t.Fatalf("WebhookThread of another webhook = %q, %v; want \"\"", conv, err)
	}
}
