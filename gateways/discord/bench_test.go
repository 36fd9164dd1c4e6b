package discord

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// startBench runs a gateway against a fake with pacing out of the way
// (each iteration uses its own channel, so no per-channel limit applies).
func startBench(b *testing.B) (*fakediscord.Server, *Gateway, *testutil.Inbox) {
	b.Helper()
	fake := fakediscord.New(fakediscord.Options{Token: testToken, HeartbeatInterval: time.Second})
	cfg := FastConfig(fake)
	cfg.Guild = GuildAll
	cfg.Pace = gateways.Limits{Global: gateways.Limit{N: 1 << 20, Per: time.Millisecond}}
	gw, err := New(context.Background(), cfg, Deps{Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	inbox := testutil.NewInbox()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = gw.Run(ctx, inbox); close(done) }()
	b.Cleanup(func() { cancel(); <-done; fake.Close() })
	testutil.WaitFor(b, "the session identified", func() bool { return len(fake.Identifies()) > 0 })
	return fake, gw, inbox
}

// BenchmarkMessageRoundTrip is one guild message through the fake's
// websocket, normalised into a signal, and its one-line reply sent back
// through the delivery layer to the fake's REST API (both sides of the
// loopback counted).
func BenchmarkMessageRoundTrip(b *testing.B) {
	fake, gw, inbox := startBench(b)
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		i++
		ch := strconv.Itoa(4_000_000 + i)
		fake.InjectMessage(fakediscord.Message{ChannelID: ch, GuildID: guildID, Author: ann, Content: "What time is it in Tokyo?"})
		s := <-inbox.Signals()
		if _, err := gw.Act(ctx, core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: "It is 21:00 in Tokyo.", ReplyTo: s.MessageID}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReply is one one-line reply through the delivery layer to the
// fake's REST API.
func BenchmarkReply(b *testing.B) {
	_, gw, _ := startBench(b)
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		i++
		a := core.Action{Kind: core.ActionReply, Conv: core.Conversation{Gateway: Name, Chat: strconv.Itoa(4_000_000 + i)}, Text: "It is 21:00 in Tokyo."}
		if _, err := gw.Act(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}
