package hitl_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// policy is a hitl.Rejudger whose decision a test changes, as a reload
// changes the rules; it records what it was asked.
type policy struct {
	mu    sync.Mutex
	d     core.Decision
	asked []core.Action
}

func (p *policy) Rejudge(_ context.Context, a core.Action) core.Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, a)
	return p.d
}

func (p *policy) set(d core.Decision) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.d = d
}

var _ hitl.Rejudger = (*policy)(nil)

// denyShell is what the policy gate decides of a shell call once
// policy.rules say {tool: shell, decision: deny}.
var denyShell = core.Decision{Verdict: core.Deny, Rule: "#1 {tool: shell, decision: deny}", Reason: "the policy forbids this shell call"}

// TestApprovedCallJudgedByThePolicyInForce: a call held under one policy
// and approved after the policy came to deny it (a reload, or an instance
// with other rules claiming the approval) is not run: the approval is
// recorded failed once with the reason, the refusal audited, the
// requester's conversation and the approver told, and the LLM gets the
// reason as from a deny. Before, the broker ran whatever had been held.
func TestApprovedCallJudgedByThePolicyInForce(t *testing.T) {
	p := &policy{d: core.Decision{Verdict: core.NeedsApproval, Rule: "#1 {tool: shell, decision: approve}"}}
	h := newHarness(t, func(o *hitl.Options) { o.Policy = p })
	tok := h.hold(t, lsCall)
	p.set(denyShell) // the reload
	if !h.say(boss, convB, "/approve "+tok+" always") {
		t.Fatal("/approve not taken as a command")
	}
	h.idle(t)
	if n := h.d.runs.Load(); n != 0 {
		t.Fatalf("the call ran %d times though the policy in force denies it", n)
	}
	if len(p.asked) != 1 || p.asked[0].Conv != convA || p.asked[0].From != asker || p.asked[0].Call != lsCall || p.asked[0].Kind != core.ActionTool {
		t.Errorf("the policy was asked %+v; want the held call once, in %s for %s", p.asked, convA, asker)
	}
	a, err := h.store.Approval(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != record.StatusFailed || a.ResolvedBy != boss {
		t.Errorf("approval %s by %s; want failed, resolved by %s", a.Status, a.ResolvedBy, boss)
	}
	mustContain(t, "note", a.Note, "refused", "the policy forbids this shell call", "#1 {tool: shell, decision: deny}")
	for _, c := range []core.Conversation{convA, convB, convDM} {
		got := h.lastReply(t, c)
		if r := got.Resolution; r == nil || r.Token != tok || r.Status != "failed" {
			t.Errorf("%s: resolution = %+v", c, r)
		}
		mustContain(t, "notice in "+c.Key(), got.Text, "Refused", "shell `ls -la /srv`", "approved by beta:boss", "did not run", "the policy forbids this shell call")
	}
	s := h.signal(t)
	if s.Kind != outcome || s.Conv != convA || s.From != asker {
		t.Errorf("signal = %+v", s)
	}
	mustContain(t, "outcome", s.Text, "[gatehouse]", "held shell call", "was not run", "refused: the policy forbids this shell call")
	if strings.Contains(s.Text, tok) || strings.Contains(s.Text, "{tool:") {
		t.Errorf("the outcome for the LLM holds the token or the rule: %q", s.Text)
	}
	if got := strings.Join(h.audit(t), ","); got != "requested,refused" {
		t.Errorf("audit = %s; want requested,refused", got)
	}
	es, _ := h.store.QueryAudit(context.Background(), record.AuditFilter{Outcome: "refused"})
	if len(es) != 1 || es[0].Detail != "policy: #1 {tool: shell, decision: deny}" || es[0].ApprovedBy != boss {
		t.Errorf("refused audit = %+v", es)
	}
	if h.b.StandingAllowed(context.Background(), "shell", lsCall.Args) {
		t.Error("a refused 'approve always' added a standing allow")
	}
	h.say(admin, convA, "/approve "+tok)
	mustContain(t, "second approve", h.lastReply(t, convA).Text, "already approved (it ran and failed) by beta:boss")
	if n := h.d.runs.Load(); n != 0 {
		t.Errorf("a second /approve ran it %d times", n)
	}
	h.noSignal(t)
}

// TestApprovedCallRunsWhenThePolicyStillHoldsOrAllows: a policy in force
// that holds the call (what the human has just answered) or allows it
// lets the approved call run.
func TestApprovedCallRunsWhenThePolicyStillHoldsOrAllows(t *testing.T) {
	for _, v := range []core.Verdict{core.NeedsApproval, core.Allow} {
		t.Run(v.String(), func(t *testing.T) {
			p := &policy{d: core.Decision{Verdict: v}}
			h := newHarness(t, func(o *hitl.Options) { o.Policy = p })
			tok := h.hold(t, lsCall)
			h.say(boss, convB, "/approve "+tok)
			h.idle(t)
			if n := h.d.runs.Load(); n != 1 {
				t.Fatalf("ran %d times, want once", n)
			}
			if st := h.status(t, tok); st != record.StatusExecuted {
				t.Errorf("status %s, want executed", st)
			}
		})
	}
}
