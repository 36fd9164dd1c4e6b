package telegram

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// longReply builds about n UTF-16 units of paragraphs with astral
// characters and a Go code block in the middle.
func longReply(n int) string {
	var b strings.Builder
	for p := 0; gateways.UTF16Len(b.String()) < n; p++ {
		if p == 6 {
			b.WriteString("```go\n")
			for i := range 60 {
				fmt.Fprintf(&b, "x%d := compute(%d) // step\n", i, i)
			}
			b.WriteString("```\n\n")
			continue
		}
		for w := range 40 {
			fmt.Fprintf(&b, "word%d-%d😀 ", p, w)
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

func TestLongReplyArrivesInOrderedChunks(t *testing.T) {
	h := newHarness(t)
	text := longReply(10000)
	if gateways.UTF16Len(text) < 10000 {
		t.Fatal("test text too short")
	}
	if _, err := h.gw.Act(context.Background(), reply(convOf(alice.ID), text)); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Sent()
	if len(sent) < 3 {
		t.Fatalf("%d messages for 10,000 characters", len(sent))
	}
	var got []string
	for i, s := range sent {
		if n := gateways.UTF16Len(s.Plain); n > faketg.MaxText {
			t.Fatalf("chunk %d has %d units", i, n)
		}
		if s.ParseMode != "HTML" {
			t.Fatalf("chunk %d sent as %q", i, s.ParseMode)
		}
		got = append(got, strings.Fields(s.Plain)...)
	}
	var want []string
	for _, f := range strings.Fields(text) {
		if !strings.HasPrefix(f, "```") {
			want = append(want, f)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("text lost or reordered:\ngot  %.300q\nwant %.300q", strings.Join(got, " "), strings.Join(want, " "))
	}
}

func TestRateLimitStormDeliversEverythingInOrder(t *testing.T) {
	h := newHarness(t)
	h.fake.FailNext("sendMessage", 8, faketg.FaultTooMany)
	var wg sync.WaitGroup
	for _, chat := range []int64{alice.ID, bob.ID, group.ID} {
		wg.Go(func() {
			for i := range 6 {
				if _, err := h.gw.Act(context.Background(), reply(convOf(chat), fmt.Sprintf("msg %d to %d", i, chat))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	perChat := map[int64][]string{}
	for _, s := range h.fake.Sent() {
		perChat[s.ChatID] = append(perChat[s.ChatID], s.Plain)
	}
	for _, chat := range []int64{alice.ID, bob.ID, group.ID} {
		var want []string
		for i := range 6 {
			want = append(want, fmt.Sprintf("msg %d to %d", i, chat))
		}
		if strings.Join(perChat[chat], "|") != strings.Join(want, "|") {
			t.Fatalf("chat %d got %q", chat, perChat[chat])
		}
	}
	if n := h.fake.Early(); n != 0 {
		t.Fatalf("%d requests came before retry_after had passed", n)
	}
	if n := h.fake.Calls("sendMessage"); n != 18+8 {
		t.Fatalf("%d sendMessage calls, want 26 (18 delivered + 8 refused)", n)
	}
}

func TestEntityRejectionResendsPlain(t *testing.T) {
	h := newHarness(t)
	h.fake.RejectEntities(true)
	md := "**Done** & <ok>"
	if _, err := h.gw.Act(context.Background(), reply(convOf(alice.ID), md)); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Sent()
	if len(sent) != 1 || sent[0].ParseMode != "" || sent[0].Text != md {
		t.Fatalf("sent %+v", sent)
	}
}

func TestTransientErrorsRetried(t *testing.T) {
	h := newHarness(t)
	h.fake.FailNext("sendMessage", 1, faketg.FaultServer)
	h.fake.FailNext("sendMessage", 1, faketg.FaultMalformed)
	if _, err := h.gw.Act(context.Background(), reply(convOf(alice.ID), "hi")); err != nil {
		t.Fatal(err)
	}
	if len(h.fake.Sent()) != 1 {
		t.Fatalf("sent %+v", h.fake.Sent())
	}
}

func TestOutageWithinRetryForIsRiddenOut(t *testing.T) {
	// A minute-long outage is a dozen failures at the test's backoff: the
	// reply must still arrive, not be dropped after a few attempts.
	h := newHarness(t)
	h.fake.FailNext("sendMessage", 12, faketg.FaultServer)
	if _, err := h.gw.Act(context.Background(), reply(convOf(alice.ID), "hi")); err != nil {
		t.Fatalf("reply dropped during a short outage: %v", err)
	}
	if n := h.fake.Calls("sendMessage"); n != 13 {
		t.Fatalf("%d sendMessage calls, want 13 (12 failed, 1 delivered)", n)
	}
	if len(h.fake.Sent()) != 1 {
		t.Fatalf("sent %+v", h.fake.Sent())
	}
}

func TestUndeliverableReplyReturnsError(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.RetryFor = 20 * time.Millisecond }))
	h.fake.FailNext("sendMessage", 1000, faketg.FaultServer)
	_, err := h.gw.Act(context.Background(), reply(convOf(alice.ID), "hi"))
	if err == nil || !strings.Contains(err.Error(), "telegram:1001") || !strings.Contains(err.Error(), "giving up") {
		t.Fatalf("want an error naming the conversation, got %v", err)
	}
	if n := h.fake.Calls("sendMessage"); n < 2 {
		t.Fatalf("%d attempts, want retries", n)
	}
	assertNoToken(t, err.Error())
}

// A reply that finally cannot be delivered is logged at error level with
// its conversation and counted.
func TestUndeliverableReplyIsLoggedAndCounted(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.RetryFor = 20 * time.Millisecond }))
	h.fake.FailNext("sendMessage", 1000, faketg.FaultServer)
	if _, err := h.gw.Act(context.Background(), reply(convOf(alice.ID), "hi")); err == nil {
		t.Fatal("undeliverable reply succeeded")
	}
	var logged bool
	for line := range strings.SplitSeq(h.logs.String(), "\n") {
		logged = logged || strings.Contains(line, `"level":"error"`) && strings.Contains(line, `"conv":"telegram:1001"`)
	}
	if !logged {
		t.Fatalf("no error line with the conversation:\n%s", h.logs)
	}
	if st := h.gw.DeliveryStats(); st.Failed != 1 || st.Sent != 0 || st.Retried == 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestTransportErrorHasNoToken(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.RetryFor = 20 * time.Millisecond }))
	h.fake.Close()
	_, err := h.gw.Act(context.Background(), reply(convOf(alice.ID), "hi"))
	if err == nil {
		t.Fatal("sending to a closed server succeeded")
	}
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("want the URL with the token masked, got %v", err)
	}
	assertNoToken(t, err.Error())
}

func TestReplyToAndEmptyText(t *testing.T) {
	h := newHarness(t)
	a := reply(convOf(alice.ID), "answer")
	a.ReplyTo = "77"
	if _, err := h.gw.Act(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := h.gw.Act(context.Background(), reply(convOf(alice.ID), "  \n ")); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Sent()
	if len(sent) != 1 || sent[0].ReplyTo != 77 {
		t.Fatalf("sent %+v", sent)
	}
}

func TestActRejectsWhatItCannotDeliver(t *testing.T) {
	h := newHarness(t)
	for _, a := range []core.Action{
		{Kind: core.ActionTool, Conv: convOf(alice.ID)},
		reply(core.Conversation{Gateway: Name, Chat: "not-a-number"}, "x"),
	} {
		if _, err := h.gw.Act(context.Background(), a); err == nil {
			t.Errorf("Act(%+v) succeeded", a)
		}
	}
	if len(h.fake.Sent()) != 0 {
		t.Fatalf("sent %+v", h.fake.Sent())
	}
}

// TestReplyToAnUpgradedGroupFollowsIt: a group upgraded to a supergroup
// (Telegram answers sends to the old id with 400 and migrate_to_chat_id)
// still gets its reply, every chunk once, in the supergroup; the next
// reply goes there directly.
func TestReplyToAnUpgradedGroupFollowsIt(t *testing.T) {
	h := newHarness(t)
	const old, super = -500, -100500
	h.fake.Migrate(old, super)
	text := longReply(6000)
	if _, err := h.gw.Act(context.Background(), reply(convOf(old), text)); err != nil {
		t.Fatalf("reply to the upgraded group: %v", err)
	}
	sent := h.fake.Sent()
	if len(sent) != 2 || sent[0].ChatID != super || sent[1].ChatID != super {
		t.Fatalf("sent %+v, want the reply's two chunks in %d", sent, int64(super))
	}
	if _, err := h.gw.Act(context.Background(), reply(convOf(old), "and again")); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Sent(); len(got) != 3 || got[2].ChatID != super || got[2].Plain != "and again" {
		t.Fatalf("second reply: %+v", got[len(got)-1])
	}
	if n := h.fake.Calls("sendMessage"); n != 4 {
		t.Errorf("%d sendMessage calls; want one refused by the old group, then three", n)
	}
}
