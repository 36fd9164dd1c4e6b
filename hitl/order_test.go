package hitl_test

import (
	"context"
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

// TestPressAcknowledgedBeforeTheRun: a button press's toast is handed to
// the gateway's ack before the approved action starts. While ack runs it
// lets every other goroutine run until all are blocked (synctest.Wait): a
// run already started by then would have reached the tool.
func TestPressAcknowledgedBeforeTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		tok := h.hold(t, lsCall)
		var acks []string
		ranAtAck := int32(-1)
		toast := h.b.Press(context.Background(), boss, convB, tok, core.DecisionApprove, func(toast string) {
			synctest.Wait()
			ranAtAck = h.d.runs.Load()
			acks = append(acks, toast)
		})
		h.idle(t)
		if len(acks) != 1 || acks[0] != toast || toast != "approved — running…" {
			t.Fatalf("acks %q, toast %q; want the toast acknowledged once", acks, toast)
		}
		if ranAtAck != 0 {
			t.Errorf("the tool had run %d times when the press was acknowledged", ranAtAck)
		}
		if n := h.d.runs.Load(); n != 1 {
			t.Errorf("the tool ran %d times", n)
		}
		// A press that approves nothing is acknowledged too.
		acks = nil
		h.b.Press(context.Background(), eve, convB, tok, core.DecisionApprove, func(toast string) { acks = append(acks, toast) })
		if len(acks) != 1 || acks[0] != "not authorised" {
			t.Errorf("a stranger's press acknowledged with %q", acks)
		}
	})
}
