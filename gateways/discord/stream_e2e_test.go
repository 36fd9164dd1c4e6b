package discord_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// botMessages returns the contents the bot's messages in channel show now
// (after their edits), in the order they were created.
func botMessages(dc *fakediscord.Server, channel string) []string {
	var out []string
	for _, m := range dc.Messages(channel) {
		if now, ok := dc.Message(m.ID); ok {
			out = append(out, now.Content)
		}
	}
	return out
}

// replyTo sends the guest's DM and waits until the bot's messages in the
// DM channel end with the answer's last sentence; it returns them.
func replyTo(t *testing.T, e *e2e, answer func() fakeoai.Step) []string {
	t.Helper()
	e.ai.Push(answer())
	ch := e.dc.DMChannel(guest.ID)
	e.dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: guest, Content: "the plan, please"})
	var got []string
	testutil.WaitFor(t, "the whole reply", func() bool {
		got = botMessages(e.dc, ch)
		return len(got) > 0 && strings.HasSuffix(got[len(got)-1], gatewaytest.LongAnswerEnd)
	})
	return got
}

// TestE2EStreamedReplyEndsAsTheNonStreamedMessages: a 6,000-character
// answer streamed in small chunks is shown while it is written and ends as
// exactly the messages the same answer sends without streaming, each
// message edited at most once a second (its creation included).
func TestE2EStreamedReplyEndsAsTheNonStreamedMessages(t *testing.T) {
	t.Parallel()
	answer := gatewaytest.LongAnswer()
	want := replyTo(t, startE2E(t), func() fakeoai.Step { return fakeoai.Text(answer) })
	if len(want) < 4 {
		t.Fatalf("the non-streamed reply took %d messages; want 6,000 characters split in 4", len(want))
	}

	e := startE2EWith(t, func(c *config.Config) { c.LLM.Providers[0].Stream = true })
	ch := e.dc.DMChannel(guest.ID)
	var got []string
	replyTo(t, e, func() fakeoai.Step { return fakeoai.Text(answer).Chunked(180, 60*time.Millisecond) })
	testutil.WaitFor(t, "the streamed reply to end as the non-streamed one", func() bool {
		got = botMessages(e.dc, ch)
		return slices.Equal(got, want)
	})
	if edits := editPace(t, e, ch); edits == 0 {
		t.Error("no edit: the reply was not shown while it was written")
	}
}

// editPace checks that no bot message in channel was created or edited
// less than gateways.LiveEvery after its previous delivery, and returns
// the number of edits.
func editPace(t *testing.T, e *e2e, channel string) int {
	t.Helper()
	var ds []testutil.Delivery
	ids := map[string]bool{}
	for _, m := range e.dc.Messages(channel) {
		ds = append(ds, testutil.Delivery{Key: m.ID, At: m.At})
		ids[m.ID] = true
	}
	for _, ed := range e.dc.Edits() {
		if ids[ed.MessageID] {
			ds = append(ds, testutil.Delivery{Key: ed.MessageID, At: ed.At})
		}
	}
	return testutil.CheckSpacing(t, ds, gateways.LiveEvery)
}

// TestE2EStreamedEditRateLimitedLosesNothing: a 429 with retry_after on a
// message edit delays it — no request reaches the fake before the pause is
// over — and the streamed reply still ends as exactly the non-streamed
// messages.
func TestE2EStreamedEditRateLimitedLosesNothing(t *testing.T) {
	t.Parallel()
	answer := gatewaytest.LongAnswer()
	want := replyTo(t, startE2E(t), func() fakeoai.Step { return fakeoai.Text(answer) })

	e := startE2EWith(t, func(c *config.Config) { c.LLM.Providers[0].Stream = true })
	e.dc.FailNext(fakediscord.RouteEditMessage, 1, fakediscord.FaultTooMany)
	ch := e.dc.DMChannel(guest.ID)
	replyTo(t, e, func() fakeoai.Step { return fakeoai.Text(answer).Chunked(180, 60*time.Millisecond) })
	testutil.WaitFor(t, "the streamed reply to end as the non-streamed one", func() bool {
		return slices.Equal(botMessages(e.dc, ch), want)
	})
	if asked, done := e.dc.Calls(fakediscord.RouteEditMessage), len(e.dc.Edits()); asked != done+1 || done == 0 {
		t.Errorf("%d message edits asked, %d made; want the refused one and the ones after it", asked, done)
	}
	if n := e.dc.Early(); n != 0 {
		t.Errorf("%d requests arrived during the 429 pause; want none", n)
	}
}
