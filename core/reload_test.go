package core_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// TestAuthSetReplacesTheLists: Set swaps the allow lists and approvers for
// the next signal, beside concurrent checks (run with -race).
func TestAuthSetReplacesTheLists(t *testing.T) {
	a := core.NewAuth(map[string][]string{"tg": {"1"}}, []core.Identity{"tg:9"})
	alice := core.Signal{Kind: core.KindMessage, From: "tg:1", Conv: core.Conversation{Gateway: "tg", Chat: "1"}}
	bob := core.Signal{Kind: core.KindMessage, From: "tg:2", Conv: core.Conversation{Gateway: "tg", Chat: "2"}}
	boss := core.Signal{Kind: core.KindMessage, From: "tg:9", Conv: core.Conversation{Gateway: "tg", Chat: "9"}}
	if !a.Allowed(alice) || a.Allowed(bob) || !a.Allowed(boss) {
		t.Fatal("before Set: want alice and the approver only")
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 200 {
			a.Allowed(alice)
		}
	})
	a.Set(map[string][]string{"tg": {"2"}}, []core.Identity{"tg:8"})
	wg.Wait()
	if a.Allowed(alice) || !a.Allowed(bob) || a.Allowed(boss) {
		t.Error("after Set: want bob only (alice and the old approver gone)")
	}
}

// TestPolicyGateSetRules: SetRules changes the decision of the next call,
// beside concurrent checks (run with -race).
func TestPolicyGateSetRules(t *testing.T) {
	g := &core.PolicyGate{Catalog: writerCatalog{}, Rules: []core.Rule{{Index: 1, Tool: "write", Decision: core.Allow}}}
	a := core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: "write", Args: `{}`}}
	if d := g.Check(context.Background(), a); d.Verdict != core.Allow {
		t.Fatalf("before: %v", d)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 200 {
			g.Check(context.Background(), a)
		}
	})
	g.SetRules([]core.Rule{{Index: 1, Tool: "write", Decision: core.Deny}})
	wg.Wait()
	d := g.Check(context.Background(), a)
	if d.Verdict != core.Deny || d.Rule != "#1 {tool: write, decision: deny}" {
		t.Errorf("after SetRules: %+v", d)
	}
	g.SetRules(nil) // no rule: the default holds a tool that changes things
	if d := g.Check(context.Background(), a); d.Verdict != core.NeedsApproval {
		t.Errorf("after SetRules(nil): %+v", d)
	}
}
