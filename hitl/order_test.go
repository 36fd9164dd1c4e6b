package hitl_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestAcknowledgementComesBeforeTheOutcome: the "Approved: running…"
// reply to a typed /approve reaches the gateway before anything the run
// produces, however fast the run. While the gateway takes the
// acknowledgement it lets every other goroutine run until all are blocked
// (synctest.Wait): a run already started by then would finish and deliver
// its outcome first.
func TestAcknowledgementComesBeforeTheOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.beta.before = func(a core.Action) {
			if strings.HasPrefix(a.Text, "Approved: running") {
				synctest.Wait()
			}
		}
		tok := h.hold(t, lsCall)
		h.say(boss, convB, "/approve "+tok+" always")
		h.idle(t)
		inB := h.beta.in(convB)
		if len(inB) != 2 {
			t.Fatalf("%d messages in %s, want the acknowledgement and the outcome", len(inB), convB)
		}
		mustContain(t, "first message", inB[0].Text, "Approved: running", tok, "Standing allow #1 added")
		mustContain(t, "second message", inB[1].Text, "Approved by beta:boss", "ran")
		if inB[0].ReplyTo != "m1" {
			t.Errorf("the acknowledgement does not answer the command: ReplyTo %q", inB[0].ReplyTo)
		}
		if s := h.signal(t); !strings.Contains(s.Text, "approved by beta:boss and ran") {
			t.Errorf("outcome signal %q", s.Text)
		}
	})
}
