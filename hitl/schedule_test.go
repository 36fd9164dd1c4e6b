package hitl_test

import (
	"context"
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
	if got := h.b.Press(context.Background(), sched, convA, tok, core.DecisionApprove); got != "not authorised" {
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
