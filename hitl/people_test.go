package hitl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// bossOnAlpha is boss's identity on the other gateway: one person, two
// identities (hitl.people).
var bossOnAlpha = core.Identity("alpha:boss")

// TestSelfApprovalIsPerPerson is issue 21 item 7: with self-approval off,
// a person who asked as one identity cannot approve as another identity
// of theirs (hitl.people); they may still deny it, /pending tells them
// it is their own, and an approver who is another person approves it.
func TestSelfApprovalIsPerPerson(t *testing.T) {
	h := newHarness(t, func(o *hitl.Options) {
		o.AllowSelfApproval = false
		o.Approvers = append(o.Approvers, bossOnAlpha)
		o.People = [][]core.Identity{{bossOnAlpha, boss}}
	})
	ctx := context.Background()
	tok, err := h.b.Hold(ctx, core.Held{Conv: convA, From: bossOnAlpha, Call: lsCall})
	if err != nil {
		t.Fatal(err)
	}
	tok = h.lastReply(t, convA).Approval.Token
	h.say(boss, convB, "/approve "+tok)
	mustContain(t, "the same person's /approve from another gateway", h.lastReply(t, convB).Text, "another approver must approve it")
	if got := h.b.Press(ctx, boss, convB, tok, core.DecisionApprove, nil); !strings.Contains(got, "cannot approve your own") {
		t.Errorf("press toast = %q, want a refusal", got)
	}
	if n := h.d.runs.Load(); n != 0 || h.status(t, tok) != record.StatusPending {
		t.Fatalf("the requester's other identity approved: ran %d, status %s", n, h.status(t, tok))
	}
	h.say(boss, convB, "/pending")
	mustContain(t, "/pending of the requester's other identity", h.lastReply(t, convB).Text, tok, "your own request")
	h.say(admin, convA, "/approve "+tok)
	h.idle(t)
	if n := h.d.runs.Load(); n != 1 {
		t.Errorf("another person's /approve ran the tool %d times, want 1", n)
	}

	tok2, err := h.b.Hold(ctx, core.Held{Conv: convA, From: bossOnAlpha, Call: lsCall})
	if err != nil {
		t.Fatal(err)
	}
	tok2 = h.lastReply(t, convA).Approval.Token
	h.say(boss, convB, "/deny "+tok2+" not now")
	if st := h.status(t, tok2); st != record.StatusDenied {
		t.Errorf("the requester's other identity denied: status %s, want denied", st)
	}
}

// TestPeopleReload: SetApprovers with new people applies to the next
// command; an identity in two groups or a malformed one is refused and
// changes nothing; an identity in no group is a person of its own.
func TestPeopleReload(t *testing.T) {
	h := newHarness(t, func(o *hitl.Options) {
		o.AllowSelfApproval = false
		o.Approvers = append(o.Approvers, bossOnAlpha)
	})
	approvers := h.b.Approvers()
	if err := h.b.SetApprovers(approvers, []core.Identity{bossOnAlpha, boss}, []core.Identity{boss}); err == nil {
		t.Error("an identity in two groups was accepted")
	}
	if err := h.b.SetApprovers(approvers, []core.Identity{"nocolon", boss}); err == nil {
		t.Error("a malformed identity in a group was accepted")
	}
	ctx := context.Background()
	if _, err := h.b.Hold(ctx, core.Held{Conv: convA, From: bossOnAlpha, Call: lsCall}); err != nil {
		t.Fatal(err)
	}
	tok := h.lastReply(t, convA).Approval.Token
	// No groups: alpha:boss and beta:boss are two persons.
	if got := h.b.Press(ctx, boss, convB, tok, core.DecisionApprove, nil); strings.Contains(got, "cannot approve your own") {
		t.Fatalf("without hitl.people another identity was refused as the requester: %q", got)
	}
	h.idle(t)
	if err := h.b.SetApprovers(approvers, []core.Identity{bossOnAlpha, boss}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.b.Hold(ctx, core.Held{Conv: convA, From: bossOnAlpha, Call: lsCall}); err != nil {
		t.Fatal(err)
	}
	tok2 := h.lastReply(t, convA).Approval.Token
	if got := h.b.Press(ctx, boss, convB, tok2, core.DecisionApprove, nil); !strings.Contains(got, "cannot approve your own") {
		t.Errorf("after the reload, press toast = %q, want a refusal", got)
	}
}

// TestStatusListsApproversByPerson: /status names the approvers, the
// identities of one person together.
func TestStatusListsApproversByPerson(t *testing.T) {
	h := newHarness(t, func(o *hitl.Options) {
		o.Approvers = []core.Identity{boss, admin, bossOnAlpha}
		o.People = [][]core.Identity{{bossOnAlpha, boss, "gamma:notanapprover"}}
	})
	lines := strings.Join(h.b.StatusLines(context.Background(), convA), "\n")
	mustContain(t, "/status", lines, "Approvers: beta:boss = alpha:boss; alpha:admin")
	if strings.Contains(lines, "gamma:notanapprover") {
		t.Errorf("/status names an identity that is not an approver:\n%s", lines)
	}
}
