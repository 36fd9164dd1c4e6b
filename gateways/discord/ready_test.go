package discord

import (
	"testing"

	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestReadyFollowsTheSession: not ready before Run, ready once the session
// is up, not ready after the connection is lost and cannot be reopened.
func TestReadyFollowsTheSession(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	if err := h.gw.Ready(); err == nil {
		t.Fatal("Ready before Run: nil, want an error")
	}
	h.start()
	testutil.WaitFor(t, "ready", func() bool { return h.gw.Ready() == nil })
	fake.Close()
	testutil.WaitFor(t, "not ready after the fake went down", func() bool { return h.gw.Ready() != nil })
}
