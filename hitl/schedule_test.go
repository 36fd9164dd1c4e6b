package hitl_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

const sched = core.Identity("schedule:beat")

// TestScheduleIsNeverAnApprover: listed among the approvers, a schedule's
// identity still cannot approve (its own or any) held call; the listing is
// logged as ignored.
func TestScheduleIsNeverAnApprover(t *testing.T) {
	h := newHarness(t, func(o *hitl.Options) { o.Approvers = append(o.Approvers, sched) })
	if h.b.IsApprover(sched) {
		t.Fatal("IsApprover(schedule:beat) = true")
	}
	mustContain(t, "log", h.logs.String(), "a schedule is never an approver")
	text, err := h.b.Hold(context.Background(), core.Held{Conv: convA, From: sched, Call: lsCall, Rule: "shell → approve"})
	if err != nil {
		t.Fatal(err)
	}
	_ = text
	tok := h.lastReply(t, convA).Approval.Token
	h.say(sched, convA, "/approve "+tok)
	mustContain(t, "reply", h.lastReply(t, convA).Text, "Not authorised")
	if got := h.b.Press(context.Background(), sched, convA, tok, core.DecisionApprove, nil); got != "not authorised" {
		t.Errorf("press toast = %q", got)
	}
	if st := h.status(t, tok); st != record.StatusPending {
		t.Errorf("status %s, want pending", st)
	}
	if n := h.d.runs.Load(); n != 0 {
		t.Errorf("tool ran %d times", n)
	}
}

// TestOutstandingFollowsTheRequestersApprovalToItsFollowUp: a requester
// has something outstanding from the hold until the follow-up turn of the
// approved call's outcome is done; others have nothing.
func TestOutstandingFollowsTheRequestersApprovalToItsFollowUp(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	out := func(id core.Identity) bool {
		t.Helper()
		b, err := h.b.Outstanding(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if out(sched) {
		t.Fatal("outstanding before any hold")
	}
	if _, err := h.b.Hold(ctx, core.Held{Conv: convA, From: sched, Call: lsCall, Rule: "shell → approve"}); err != nil {
		t.Fatal(err)
	}
	tok := h.lastReply(t, convA).Approval.Token
	if !out(sched) || out(asker) {
		t.Fatalf("after the hold: schedule %v, asker %v; want true, false", out(sched), out(asker))
	}
	h.say(boss, convB, "/approve "+tok)
	s := h.signal(t) // the outcome, handed to the engine
	if s.From != sched || s.Done == nil {
		t.Fatalf("outcome signal = %+v; want from the schedule, with Done", s)
	}
	h.idle(t)
	if !out(sched) {
		t.Fatal("not outstanding while the outcome's follow-up turn runs")
	}
	s.Done()
	s.Done() // a second call changes nothing
	if out(sched) {
		t.Fatal("still outstanding after the follow-up turn")
	}
}

// TestOutstandingWhileTheDecisionIsAnnounced: from the moment an approval
// stops being pending until its outcome's follow-up turn is done, its
// requester has something outstanding — also while the decision is being
// announced (the acknowledgement of /approve before the run starts, the
// notices of /deny and of expiry before the outcome is queued; a platform
// may take its time), and while an approval past its expiry waits for the
// sweep that will expire it. Otherwise a schedule's next run would start
// beside the outcome turn of its previous one.
func TestOutstandingWhileTheDecisionIsAnnounced(t *testing.T) {
	for _, c := range []struct {
		name   string
		notice string // the text during whose delivery Outstanding is asked
		decide func(t *testing.T, h *harness, tok string)
	}{
		{"approve", "Approved: running", func(_ *testing.T, h *harness, tok string) { h.say(boss, convB, "/approve "+tok) }},
		{"deny", "Denied", func(_ *testing.T, h *harness, tok string) { h.say(boss, convB, "/deny "+tok) }},
		{"expire", "Expired", func(t *testing.T, h *harness, _ string) {
			h.clock.Advance(ttl)
			if _, err := h.b.ExpireDue(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			ctx := context.Background()
			var mu sync.Mutex
			var during []bool
			hook := func(a core.Action) {
				if !strings.Contains(a.Text, c.notice) {
					return
				}
				out, err := h.b.Outstanding(ctx, sched)
				mu.Lock()
				defer mu.Unlock()
				during = append(during, out && err == nil)
			}
			h.alpha.before, h.beta.before = hook, hook
			if _, err := h.b.Hold(ctx, core.Held{Conv: convA, From: sched, Call: lsCall, Rule: "shell → approve"}); err != nil {
				t.Fatal(err)
			}
			tok := h.lastReply(t, convA).Approval.Token
			c.decide(t, h, tok)
			s := h.signal(t) // the outcome
			h.idle(t)
			mu.Lock()
			if len(during) == 0 || slices.Contains(during, false) {
				t.Errorf("outstanding while %q was delivered: %v; want true each time", c.notice, during)
			}
			mu.Unlock()
			s.Done()
		})
	}
	t.Run("overdue", func(t *testing.T) {
		h := newHarness(t, nil)
		ctx := context.Background()
		if _, err := h.b.Hold(ctx, core.Held{Conv: convA, From: sched, Call: lsCall, Rule: "shell → approve"}); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(ttl) // past its expiry; the sweep has not run yet
		if out, err := h.b.Outstanding(ctx, sched); !out || err != nil {
			t.Errorf("Outstanding of an overdue approval not yet expired = %v, %v; want true", out, err)
		}
	})
}
