package slack_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// hugeAnswer is a reply longer than one Slack message can hold.
func hugeAnswer() string {
	var b strings.Builder
	for i := 1; b.Len() < 45000; i++ {
		fmt.Fprintf(&b, "Line %05d of the **long** answer says little. ", i)
		if i%5 == 0 {
			b.WriteString("\n")
		}
	}
	return b.String() + "That is all."
}

// dmTexts returns the texts the bot's posts in the guest's DM show now
// (after their updates), in the order they were posted.
func dmTexts(sl *fakeslack.Server) []string {
	dm := fakeslack.DMChannel(guest)
	var out []string
	for _, p := range sl.Posts(dm) {
		if m, ok := sl.Message(dm, p.TS); ok {
			out = append(out, m.Text)
		}
	}
	return out
}

// TestE2EStreamedReplyEndsAsTheNonStreamedPosts: an answer longer than a
// Slack message, streamed, is posted and updated in place with
// chat.update while it is written, and ends as exactly the posts the same
// answer makes without streaming; no post is updated twice within a
// second.
func TestE2EStreamedReplyEndsAsTheNonStreamedPosts(t *testing.T) {
	t.Parallel()
	answer := hugeAnswer()
	plain := startE2E(t, fakeslack.Options{})
	plain.ai.Push(fakeoai.Text(answer))
	plain.sl.InjectDM(guest, "everything, please")
	var want []string
	testutil.WaitFor(t, "the non-streamed reply", func() bool {
		want = dmTexts(plain.sl)
		return len(want) > 0 && strings.HasSuffix(want[len(want)-1], "That is all.")
	})
	if len(want) < 2 {
		t.Fatalf("the non-streamed reply took %d post(s); want it split", len(want))
	}

	e := startE2ETuned(t, fakeslack.Options{}, "", func(c *config.Config) { c.LLM.Providers[0].Stream = true })
	e.ai.Push(fakeoai.Text(answer).Chunked(1500, 100*time.Millisecond))
	e.sl.InjectDM(guest, "everything, please")
	testutil.WaitFor(t, "the streamed reply to end as the non-streamed one", func() bool {
		return slices.Equal(dmTexts(e.sl), want)
	})
	if updates := updatePace(t, e.sl); updates == 0 {
		t.Error("no chat.update: the reply was not shown while it was written")
	}
}

// updatePace checks that no post in the guest's DM was posted or updated
// less than gateways.LiveEvery after its previous delivery, and returns
// the number of updates.
func updatePace(t *testing.T, sl *fakeslack.Server) int {
	t.Helper()
	var ds []testutil.Delivery
	ts := map[string]bool{}
	for _, p := range sl.Posts(fakeslack.DMChannel(guest)) {
		ds = append(ds, testutil.Delivery{Key: p.TS, At: p.At})
		ts[p.TS] = true
	}
	for _, u := range sl.Updates() {
		if ts[u.TS] {
			ds = append(ds, testutil.Delivery{Key: u.TS, At: u.At})
		}
		if u.Parse != "none" {
			// chat.update's default ("client") would turn a written
			// @channel in the model's text into a mention.
			t.Errorf("chat.update of %s sent parse=%q, want none", u.TS, u.Parse)
		}
	}
	return testutil.CheckSpacing(t, ds, gateways.LiveEvery)
}

// TestE2EStreamedUpdateRateLimitedLosesNothing: a 429 with Retry-After on
// chat.update delays it — nothing reaches the channel before the pause is
// over — and the streamed reply still ends as exactly the non-streamed
// posts.
func TestE2EStreamedUpdateRateLimitedLosesNothing(t *testing.T) {
	t.Parallel()
	answer := hugeAnswer()
	plain := startE2E(t, fakeslack.Options{})
	plain.ai.Push(fakeoai.Text(answer))
	plain.sl.InjectDM(guest, "everything, please")
	var want []string
	testutil.WaitFor(t, "the non-streamed reply", func() bool {
		want = dmTexts(plain.sl)
		return len(want) > 0 && strings.HasSuffix(want[len(want)-1], "That is all.")
	})

	e := startE2ETuned(t, fakeslack.Options{}, "", func(c *config.Config) { c.LLM.Providers[0].Stream = true })
	e.sl.FailNext("chat.update", 1, fakeslack.FaultRateLimited)
	e.ai.Push(fakeoai.Text(answer).Chunked(1500, 100*time.Millisecond))
	e.sl.InjectDM(guest, "everything, please")
	testutil.WaitFor(t, "the streamed reply to end as the non-streamed one", func() bool {
		return slices.Equal(dmTexts(e.sl), want)
	})
	if n, limited := e.sl.Calls("chat.update"), e.sl.RateLimited(); n < 2 || limited != 1 {
		t.Errorf("%d chat.update calls, %d answered 429; want the refused one and the ones after it", n, limited)
	}
	if n := e.sl.Early(); n != 0 {
		t.Errorf("%d calls arrived during the 429 pause; want none", n)
	}
}
