package hitl_test

import (
	"context"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
)

// TestProfileApproverAddsNoStandingAllow: a standing allow applies in
// every conversation, so an approver a profile adds, who may approve only
// that profile's requests, cannot add one: their "/approve TOKEN always"
// (typed or pressed) runs the call once, says no standing allow was added,
// and the same call stays held everywhere.
func TestProfileApproverAddsNoStandingAllow(t *testing.T) {
	profiles := core.NewProfiles([]core.Profile{{Name: "ops", Match: []string{"alpha:A*"}, Approvers: []core.Identity{lead}}})
	h := newHarness(t, func(o *hitl.Options) { o.Profiles = profiles })
	ctx := context.Background()

	tok := h.hold(t, lsCall) // in convA, the profile's
	h.say(lead, convB, "/approve "+tok+" always")
	h.idle(t)
	if n := h.d.runs.Load(); n != 1 {
		t.Fatalf("the profile's approver's /approve always ran the tool %d times, want 1", n)
	}
	mustContain(t, "/approve always", h.beta.in(convB)[0].Text, "Approved: running", "No standing allow added")
	tok2 := h.hold(t, lsCall)
	if got := h.b.Press(ctx, lead, convB, tok2, core.DecisionApproveAlways, nil); got == "not authorised" {
		t.Fatalf("the profile's approver's approve-always button: %q", got)
	}
	h.idle(t)
	if h.b.StandingAllowed(ctx, "shell", lsCall.Args) {
		t.Fatal("a profile's approver added a standing allow, which applies in every conversation")
	}
	if list, err := h.b.StandingAllows(ctx); err != nil || len(list) != 0 {
		t.Fatalf("StandingAllows = %+v, %v; want none", list, err)
	}

	tok3 := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok3+" always")
	h.idle(t)
	if !h.b.StandingAllowed(ctx, "shell", lsCall.Args) {
		t.Error("an approver of hitl.approvers could not add a standing allow")
	}
}
