package discord

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// longText is n characters of numbered words, multi-byte ones included,
// so a lost, doubled or reordered piece shows.
func longText(n int) string {
	var b strings.Builder
	for i := 0; utf8.RuneCountInString(b.String()) < n; i++ {
		fmt.Fprintf(&b, "wörd%05d ", i)
		if i%40 == 39 {
			b.WriteString("\n\n")
		}
	}
	return string([]rune(b.String())[:n])
}

// joined is the chunks' text as one, ignoring the whitespace a split drops.
func joined(msgs []fakediscord.Sent) string {
	var parts []string
	for _, m := range msgs {
		parts = append(parts, m.Content)
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

func TestLongReplyArrivesInOrderedChunks(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake).start()
	text := longText(10000)
	if _, err := h.gw.Act(t.Context(), reply(chanID, text)); err != nil {
		t.Fatal(err)
	}
	msgs := fake.Messages(chanID)
	if len(msgs) < 6 {
		t.Fatalf("%d chunks for 10,000 characters", len(msgs))
	}
	for i, m := range msgs {
		if n := utf8.RuneCountInString(m.Content); n > 2000 {
			t.Errorf("chunk %d is %d characters", i, n)
		}
	}
	if got, want := joined(msgs), strings.Join(strings.Fields(text), " "); got != want {
		t.Fatalf("chunks do not add up to the text (%d vs %d characters)", len(got), len(want))
	}
}

func TestRateLimitStormDeliversEachReplyOnceInOrder(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake).start()
	fake.FailNext(fakediscord.RouteCreateMessage, 6, fakediscord.FaultTooMany)
	fake.FailNext(fakediscord.RouteCreateMessage, 2, fakediscord.FaultTooManyGlobal)
	fake.FailNext(fakediscord.RouteCreateMessage, 2, fakediscord.FaultUnavailable)
	var want []string
	for i := range 5 {
		text := fmt.Sprintf("reply %d", i)
		want = append(want, text)
		if _, err := h.gw.Act(t.Context(), reply(chanID, text)); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
	}
	var got []string
	for _, m := range fake.Messages(chanID) {
		got = append(got, m.Content)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	if n := fake.Early(); n != 0 {
		t.Errorf("%d requests came before the retry_after had passed", n)
	}
	if st := h.gw.DeliveryStats(); st.Retried < 10 || st.Sent != 5 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestFinalFailureIsLoggedWithConversation(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake, func(c *Config) { c.RetryFor = 100 * time.Millisecond }).start()
	fake.FailNext(fakediscord.RouteCreateMessage, 1000, fakediscord.FaultServer)
	if _, err := h.gw.Act(t.Context(), reply(chanID, "lost")); err == nil {
		t.Fatal("Act returned no error for an undeliverable reply")
	}
	if logs := h.logs.String(); !strings.Contains(logs, `"conv":"discord:4001"`) || !strings.Contains(logs, `"level":"error"`) {
		t.Fatalf("final failure not logged with the conversation key:\n%s", logs)
	}
}

func TestGuildReplyReferencesAndNeutralisesMentions(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake).start()
	id := fake.InjectMessage(inGuild(ann, mention(fake)+" ping everyone for me"))
	s := h.inbox.Next(t)
	a := core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: "@everyone @here <@&9001> hi", ReplyTo: s.MessageID}
	if _, err := h.gw.Act(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	m := fake.Messages(chanID)[0]
	if m.Reference == nil || m.Reference.MessageID != id {
		t.Errorf("reply does not reference the message: %+v", m.Reference)
	}
	am := m.AllowedMentions
	if am == nil || !slices.Equal(am.Parse, []string{"users"}) || len(am.Roles) != 0 {
		t.Errorf("allowed_mentions %+v: mass mentions not neutralised", am)
	}
	// In a DM the reply does not need a reference.
	dmID := fake.InjectMessage(dm(fake, ann, "hi"))
	s = h.inbox.Next(t)
	if _, err := h.gw.Act(t.Context(), core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: "hello", ReplyTo: dmID}); err != nil {
		t.Fatal(err)
	}
	if m := fake.Messages(s.Conv.Chat)[0]; m.Reference != nil {
		t.Errorf("DM reply references %+v", m.Reference)
	}
}

func TestTypingUntilStopped(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	stop := h.gw.StartTyping(t.Context(), core.Conversation{Gateway: Name, Chat: chanID})
	testutil.WaitFor(t, "typing renewed", func() bool { return len(fake.Typing()) >= 2 })
	stop()
	stop()
	n := len(fake.Typing())
	// stop waited for the renewals to end: none may come after it.
	if _, err := h.gw.Act(t.Context(), reply(chanID, "done")); err != nil {
		t.Fatal(err)
	}
	if len(fake.Typing()) != n {
		t.Errorf("typing went on after stop")
	}
}

func TestActRefusesOtherConversations(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	if _, err := h.gw.Act(t.Context(), core.Action{Kind: core.ActionReply, Conv: core.Conversation{Gateway: Name, Chat: "../x"}, Text: "x"}); err == nil {
		t.Error("a bad channel id was accepted")
	}
	if _, err := h.gw.Act(t.Context(), core.Action{Kind: core.ActionTool, Conv: core.Conversation{Gateway: Name, Chat: chanID}}); err == nil {
		t.Error("a tool action was accepted")
	}
}

// The typing indicator pauses during a 429 and still stops at once when
// the turn ends: a 429 on the indicator itself (discordgo's limiter would
// sleep, without a context, until its reset, and stop wait that long), a
// 429 on the channel's messages (the Outbox's pause) and a global one.
func TestTypingPausesDuringARateLimitAndStillStops(t *testing.T) {
	fake := newFake(fakediscord.Options{RetryAfter: time.Hour})
	h := newHarness(t, fake, func(c *Config) { c.RetryFor = 2 * time.Hour })
	conv := func(ch string) core.Conversation { return core.Conversation{Gateway: Name, Chat: ch} }
	typed := func(ch string) int {
		n := 0
		for _, ty := range fake.Typing() {
			if ty.ChannelID == ch {
				n++
			}
		}
		return n
	}
	renewals := func(n int) {
		t.Helper()
		from := typed("4009")
		testutil.WaitFor(t, "renewals in the free channel", func() bool { return typed("4009") >= from+n })
	}
	stopsAtOnce := func(stop func()) {
		t.Helper()
		stopped := make(chan struct{})
		go func() { stop(); close(stopped) }()
		testutil.WaitFor(t, "stop to return", func() bool {
			select {
			case <-stopped:
				return true
			default:
				return false
			}
		})
	}

	// 429 on the indicator.
	fake.FailNext(fakediscord.RouteTyping, 1, fakediscord.FaultTooMany)
	stop := h.gw.StartTyping(t.Context(), conv("4001"))
	testutil.WaitFor(t, "the 429", func() bool { return fake.Calls(fakediscord.RouteTyping) > 0 })
	// A channel nothing limits, whose renewals pace the checks below.
	stopFree := h.gw.StartTyping(t.Context(), conv("4009"))
	defer stopFree()
	renewals(3)
	stopsAtOnce(stop)

	// held sends a reply to channel that a 429 of kind holds for an hour;
	// it returns once the Outbox (and so discordgo) has read the 429.
	held := func(channel string, kind fakediscord.Fault) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		t.Cleanup(func() { cancel(); <-done })
		fake.FailNext(fakediscord.RouteCreateMessage, 1, kind)
		retried := h.gw.DeliveryStats().Retried
		go func() {
			defer close(done)
			_, _ = h.gw.Act(ctx, reply(channel, "held"))
		}()
		testutil.WaitFor(t, "the 429 read", func() bool { return h.gw.DeliveryStats().Retried > retried })
	}

	// 429 on the channel's messages: the Outbox pauses the channel.
	held("4002", fakediscord.FaultTooMany)
	stop = h.gw.StartTyping(t.Context(), conv("4002"))
	renewals(3)
	stopsAtOnce(stop)
	if n := typed("4002"); n != 0 {
		t.Errorf("%d typing indicators sent while the channel's messages were paused", n)
	}

	// A global 429 holds every route in discordgo's limiter.
	stopFree() // its renewal could cross the 429 and count as early
	held("4003", fakediscord.FaultTooManyGlobal)
	stop = h.gw.StartTyping(t.Context(), conv("4004")) // its first indicator is due at once
	stopsAtOnce(stop)
	if n := fake.Early(); n != 0 {
		t.Errorf("%d requests came before the retry_after had passed", n)
	}
}
