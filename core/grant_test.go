package core_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// grantsFor is a standing-allow lookup with no standing allows that grants
// the calls of one conversation, and records what it was asked.
type grantsFor struct {
	conv  core.Conversation
	asked []core.Action
}

func (*grantsFor) StandingAllowed(context.Context, string, string) bool { return false }

func (g *grantsFor) Granted(_ context.Context, a core.Action) (string, bool) {
	g.asked = append(g.asked, a)
	return "grant #7 by console:local until …", a.Conv == g.conv
}

// TestJudgeGrant: a grant relaxes approve to allow for the action's own
// conversation, naming the grant as the rule (the run's audit says so);
// it is never asked about a call the policy denies or allows, so it never
// widens what a standing allow would.
func TestJudgeGrant(t *testing.T) {
	here := core.Conversation{Gateway: "console", Chat: "local"}
	gr := &grantsFor{conv: here}
	g := &core.PolicyGate{Catalog: writerCatalog{}, Standing: gr, Rules: []core.Rule{
		{Index: 1, Tool: "write", Args: regexp.MustCompile(`"path":"etc/`), Decision: core.Deny},
		{Index: 2, Tool: "write", Args: regexp.MustCompile(`"path":"tmp/`), Decision: core.Allow},
		{Index: 3, Tool: "write", Decision: core.NeedsApproval},
	}}
	a := core.Action{Kind: core.ActionTool, Conv: here, From: "telegram:1", Call: llm.ToolCall{Name: "write", Args: `{"path":"a"}`}}
	j := g.Judge(context.Background(), a)
	if j.Grant == "" || j.Standing || j.Decision.Verdict != core.Allow || j.Decision.Rule != "grant #7 by console:local until …" || j.Policy.Verdict != core.NeedsApproval {
		t.Errorf("Judge = %+v; want approve relaxed to allow by grant #7", j)
	}
	if len(gr.asked) != 1 || gr.asked[0].From != "telegram:1" || gr.asked[0].Conv != here {
		t.Errorf("Granted asked about %+v; want the action with its conversation and requester", gr.asked)
	}
	elsewhere := a
	elsewhere.Conv = core.Conversation{Gateway: "console", Chat: "other"}
	if j := g.Judge(context.Background(), elsewhere); j.Grant != "" || j.Decision.Verdict != core.NeedsApproval {
		t.Errorf("Judge elsewhere = %+v; want held", j)
	}
	gr.asked = nil
	for _, path := range []string{"etc/passwd", "tmp/x"} {
		b := a
		b.Call.Args = `{"path":"` + path + `"}`
		if j := g.Judge(context.Background(), b); j.Grant != "" {
			t.Errorf("Judge %s = %+v; a grant decided", path, j)
		}
	}
	if len(gr.asked) != 0 {
		t.Errorf("Granted asked about a denied or allowed call: %+v", gr.asked)
	}
}
