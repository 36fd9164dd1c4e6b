package slack

import (
	"testing"

	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestReadyFollowsSocketMode: not ready before Run, ready once Slack's
// hello arrived, not ready after the connection is lost for good.
func TestReadyFollowsSocketMode(t *testing.T) {
	h := newHarness(t, fakeslack.Options{})
	if err := h.gw.Ready(); err == nil {
		t.Fatal("Ready before Run: nil, want an error")
	}
	h.start()
	testutil.WaitFor(t, "ready", func() bool { return h.gw.Ready() == nil })
	h.fake.Close()
	testutil.WaitFor(t, "not ready after the fake went down", func() bool { return h.gw.Ready() != nil })
}

// TestReadyEventsModeWhileServing: events mode is ready while Run serves.
func TestReadyEventsModeWhileServing(t *testing.T) {
	h := newHarness(t, fakeslack.Options{}, func(c *Config) { c.Mode = ModeEvents })
	if err := h.gw.Ready(); err == nil {
		t.Fatal("Ready before Run: nil, want an error")
	}
	h.start()
	testutil.WaitFor(t, "ready", func() bool { return h.gw.Ready() == nil })
	h.stop()
	if err := h.gw.Ready(); err == nil {
		t.Error("Ready after Run returned: nil, want an error")
	}
}
