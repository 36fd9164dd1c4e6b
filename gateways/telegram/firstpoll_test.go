package telegram

import (
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestFirstPollAsksNothingBefore: polling starts with getUpdates; the
// webhook is looked for only when Telegram answers that with a conflict
// (TestPollingClearsAStaleWebhook), not before every start's first poll,
// which it delayed by a round trip.
func TestFirstPollAsksNothingBefore(t *testing.T) {
	h := newHarness(t)
	h.start()
	testutil.WaitFor(t, "the first getUpdates", func() bool { return len(h.fake.Polls()) > 0 })
	if n := h.fake.Calls("getWebhookInfo"); n != 0 {
		t.Fatalf("getWebhookInfo asked %d times with no webhook set; want none", n)
	}
}
