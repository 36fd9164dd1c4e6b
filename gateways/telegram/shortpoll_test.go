package telegram

import (
	"testing"
	"time"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// quietFake holds every long poll for its whole timeout, as Telegram does
// when the chat is quiet.
func quietFake() *faketg.Server {
	return faketg.New(faketg.Options{Token: testToken, MaxPollWait: time.Hour, RetryAfterUnit: 10 * time.Millisecond})
}

// withLongPolls makes the long-poll timeout far longer than any test
// waits, so only a short poll can be answered within one.
var withLongPolls = withConfig(func(c *Config) { c.PollTimeout, c.StallMargin = time.Hour, time.Minute })

// TestFirstPollAfterStartIsShort: /readyz saw the bot not ready for a
// whole long poll after start when the chat was quiet (readiness waits for
// an answered getUpdates). The first poll asks with timeout 0, so the
// gateway is ready as soon as Telegram answers it; the polls after it are
// long.
func TestFirstPollAfterStartIsShort(t *testing.T) {
	h := newHarnessOn(t, quietFake(), withLongPolls).start()
	testutil.WaitFor(t, "ready", func() bool { return h.gw.Ready() == nil })
	testutil.WaitFor(t, "a second poll", func() bool { return len(h.fake.Polls()) >= 2 })
	polls := h.fake.Polls()
	if polls[0].Timeout != 0 {
		t.Errorf("first poll after start: timeout %d; want 0", polls[0].Timeout)
	}
	if want := int(time.Hour / time.Second); polls[1].Timeout != want {
		t.Errorf("poll after the first answer: timeout %d; want the long poll's %d", polls[1].Timeout, want)
	}
}

// TestPollAfterFailureIsShort: after a failed getUpdates (at start while
// Telegram is down, or later) the next poll is short, so a bot whose
// readiness lapsed during an outage is ready again as soon as Telegram
// answers, not a long poll later.
func TestPollAfterFailureIsShort(t *testing.T) {
	fake := quietFake()
	fake.FailNext("getUpdates", 3, faketg.FaultServer)
	h := newHarnessOn(t, fake, withLongPolls).start()
	testutil.WaitFor(t, "ready once Telegram answers again", func() bool { return h.gw.Ready() == nil })
	if got := fake.Calls("getUpdates"); got < 4 {
		t.Fatalf("%d getUpdates calls; want the 3 failed ones and an answered one", got)
	}
	if p := fake.Polls()[0]; p.Timeout != 0 {
		t.Errorf("first poll answered after failures: timeout %d; want 0", p.Timeout)
	}

	// Later: a long poll is held; a message answers it, the poll after
	// that fails, and the one after the failure is short again.
	testutil.WaitFor(t, "a long poll", func() bool { return len(fake.Polls()) >= 2 })
	fake.FailNext("getUpdates", 1, faketg.FaultServer)
	fake.InjectMessage(dm(alice, "hello"))
	testutil.WaitFor(t, "the poll after the failure", func() bool { return len(fake.Polls()) >= 3 })
	polls := fake.Polls()
	if polls[1].Timeout == 0 {
		t.Errorf("poll after a short answer: timeout 0; want a long poll")
	}
	if polls[2].Timeout != 0 {
		t.Errorf("poll after a failed one: timeout %d; want 0", polls[2].Timeout)
	}
	testutil.WaitFor(t, "a long poll after the short one", func() bool { return len(fake.Polls()) >= 4 })
	if p := fake.Polls()[3]; p.Timeout == 0 {
		t.Errorf("poll after an answered short one: timeout 0; want a long poll")
	}
	if err := h.gw.Ready(); err != nil {
		t.Errorf("not ready: %v", err)
	}
}
