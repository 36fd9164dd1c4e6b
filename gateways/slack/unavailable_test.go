package slack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// startOn runs the gateway on inbox until the test ends.
func (h *harness) startOn(inbox gateways.Inbox) *harness {
	h.run = gatewaytest.NewRunner(h.t, "Run", 10*time.Second)
	h.run.Go(func(ctx context.Context) error { return h.gw.Run(ctx, inbox) })
	testutil.WaitFor(h.t, "Run started", func() bool { return h.gw.run.Load() != nil })
	if h.gw.cfg.Mode == ModeSocket {
		testutil.WaitFor(h.t, "a socket mode connection", func() bool { return h.fake.Live() > 0 })
	}
	return h
}

// TestStoreDownLeavesEnvelopesUnacknowledged: in Socket Mode an event
// arriving while the store does not answer is not acknowledged (Slack
// delivers it again) and not handled; its redelivery once the store is
// back is acknowledged and handled once. The log says so once.
func TestStoreDownLeavesEnvelopesUnacknowledged(t *testing.T) {
	h := newHarness(t, fakeslack.Options{})
	inbox := gatewaytest.NewStoreDownInbox()
	h.startOn(inbox)
	inbox.Down.Store(true)
	h.fake.InjectDM("U1", "sent while the store is down")
	h.fake.InjectDM("U1", "and another")
	// Both envelopes looked at (the inbox asked about each) and refused.
	testutil.WaitFor(t, "both envelopes refused", func() bool { return inbox.Asked() >= 2 })
	if n := strings.Count(h.logs.String(), "the store does not answer"); n != 1 {
		t.Errorf("the log says the store does not answer %d times; want once", n)
	}
	if acks := h.fake.Acks(); len(acks) != 0 {
		t.Fatalf("%d envelopes acknowledged while the store is down; want 0: %+v", len(acks), acks)
	}
	inbox.Down.Store(false)
	if again := h.fake.Redeliver(); len(again) != 2 {
		t.Fatalf("%d envelopes delivered again; want 2", len(again))
	}
	got := []string{inbox.Next(t).Text, inbox.Next(t).Text}
	if got[0] != "sent while the store is down" || got[1] != "and another" {
		t.Fatalf("handled %q; want the two messages, in order", got)
	}
	inbox.Empty(t)
	testutil.WaitFor(t, "the redeliveries acknowledged", func() bool { return len(h.fake.Acks()) == 2 })
	if n := strings.Count(h.logs.String(), "the store answers again"); n != 1 {
		t.Errorf("the log says the store is back %d times; want 1", n)
	}
}

// TestStoreDownEventsAPIAnswers503: over the Events API an event arriving
// while the store does not answer gets a 503 (Slack retries it), and its
// retry once the store is back is handled.
func TestStoreDownEventsAPIAnswers503(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}, eventsMode)
	inbox := gatewaytest.NewStoreDownInbox()
	h.startOn(inbox)
	signer := h.fake.Signer(testSecret)
	const target = "http://bot.example" + EventsPath
	ev := fakeslack.Event{Channel: "D1", ChannelType: "im", User: "U1", Text: "hi while down"}
	inbox.Down.Store(true)
	req, id, ts := signer.EventCallback(target, ev)
	if w := serve(h, req); w.Code/100 == 2 {
		t.Fatalf("event while the store is down: %d; want a status Slack retries", w.Code)
	}
	inbox.Down.Store(false)
	ev.EventID, ev.TS = id, ts
	again, _, _ := signer.Retry(1).EventCallback(target, ev)
	if w := serve(h, again); w.Code != 200 {
		t.Fatalf("the retry: %d", w.Code)
	}
	if s := inbox.Next(t); s.Text != "hi while down" {
		t.Fatalf("signal %q", s.Text)
	}
}
