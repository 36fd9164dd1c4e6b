package slack

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
)

// BenchmarkMessageRoundTrip is one message through the gateway and the
// fake: a DM received over Socket Mode (acknowledged, normalised, handed
// to the inbox) and its one-chunk reply posted with chat.postMessage.
func BenchmarkMessageRoundTrip(b *testing.B) {
	h := newHarness(b, fakeslack.Options{}, unpaced).start()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h.fake.InjectDM("U1", "what time is it in Tokyo?")
		var s core.Signal
		select {
		case s = <-h.inbox.Signals():
		case <-ctx.Done():
		}
		if _, err := h.gw.Act(ctx, reply(s.Conv, "It is **noon** in Tokyo, see [the clock](https://time.is/Tokyo).")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReply is one one-chunk reply through the Outbox, mrkdwn
// conversion and chat.postMessage to the fake.
func BenchmarkReply(b *testing.B) {
	h := newHarness(b, fakeslack.Options{}, unpaced)
	conv := core.Conversation{Gateway: Name, Chat: "C1", Thread: "1700000000.000100"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.gw.Act(context.Background(), reply(conv, "It is **noon** in Tokyo & all is well.")); err != nil {
			b.Fatal(err)
		}
	}
}

// unpaced lifts the pacing, so the benchmarks measure the work, not the
// rate limits.
func unpaced(c *Config) {
	c.Pace = gateways.Limits{PerChat: gateways.Limit{N: 1 << 20, Per: time.Millisecond}, Global: gateways.Limit{N: 1 << 20, Per: time.Millisecond}}
}
