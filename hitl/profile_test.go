package hitl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// lead approves the requests of the profile over alpha:A* only.
var lead = core.Identity("beta:lead")

// TestProfileApproversOnlyForTheirProfile: an approver a profile adds may
// approve (typed or pressed) and deny that profile's requests, and no
// other: a request from a conversation outside the profile stays pending,
// and the refusal is audited.
func TestProfileApproversOnlyForTheirProfile(t *testing.T) {
	profiles := core.NewProfiles([]core.Profile{{Name: "ops", Match: []string{"alpha:A*"}, Approvers: []core.Identity{lead}}})
	h := newHarness(t, func(o *hitl.Options) { o.Profiles = profiles })
	ctx := context.Background()

	outside := core.Conversation{Gateway: "alpha", Chat: "Z9"}
	if _, err := h.b.Hold(ctx, core.Held{Conv: outside, From: asker, Call: lsCall}); err != nil {
		t.Fatal(err)
	}
	other := h.lastReply(t, outside).Approval.Token
	h.say(lead, convB, "/approve "+other)
	mustContain(t, "/approve outside the profile", h.lastReply(t, convB).Text, "Not authorised")
	if got := h.b.Press(ctx, lead, convB, other, core.DecisionApprove, nil); got != "not authorised" {
		t.Errorf("press outside the profile: toast %q", got)
	}
	if st := h.status(t, other); st != record.StatusPending {
		t.Fatalf("a request outside the profile is %s after its approver's /approve", st)
	}
	if got := strings.Join(h.audit(t), " "); got != "requested refused refused" {
		t.Errorf("audit outcomes %q, want the request and both refusals", got)
	}
	h.say(lead, convB, "/pending")
	mustContain(t, "/pending", h.lastReply(t, convB).Text, "Not authorised")

	tok := h.hold(t, lsCall) // in convA, the profile's
	h.say(lead, convB, "/approve "+tok)
	h.idle(t)
	if n := h.d.runs.Load(); n != 1 {
		t.Fatalf("the profile's approver's /approve ran the tool %d times, want 1", n)
	}
	tok2 := h.hold(t, lsCall)
	if got := h.b.Press(ctx, lead, convB, tok2, core.DecisionDeny, nil); got == "not authorised" {
		t.Errorf("the profile's approver's deny button: %q", got)
	}
	if st := h.status(t, tok2); st != record.StatusDenied {
		t.Errorf("after the profile's approver's deny: %s", st)
	}
}
