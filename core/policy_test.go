package core_test

import (
	"context"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// writerCatalog knows one tool, "write", which changes things.
type writerCatalog struct{}

func (writerCatalog) Specs() []llm.ToolSpec { return nil }
func (writerCatalog) ReadOnly(name string) (bool, bool) {
	return false, name == "write"
}
func (writerCatalog) CheckArgs(string, string) error { return nil }

type ctxKey struct{}

// ctxStanding allows every call, but only when asked under a context that
// carries ctxKey: it records the contexts it is asked under.
type ctxStanding struct{ seen []any }

func (s *ctxStanding) StandingAllowed(ctx context.Context, _, _ string) bool {
	s.seen = append(s.seen, ctx.Value(ctxKey{}))
	return ctx.Value(ctxKey{}) == "gate"
}

// TestPolicyGateAsksStandingAllowsUnderItsContext: the lookup of a standing
// allow (a store read) runs under the gate's context, so it ends with the
// turn and carries its values.
func TestPolicyGateAsksStandingAllowsUnderItsContext(t *testing.T) {
	st := &ctxStanding{}
	g := &core.PolicyGate{Catalog: writerCatalog{}, Standing: st}
	ctx := context.WithValue(context.Background(), ctxKey{}, "gate")
	a := core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: "write", Args: `{"path":"a"}`}}
	d := g.Check(ctx, a)
	if d.Verdict != core.Allow || d.Rule != "standing allow" {
		t.Fatalf("Check = %+v; want allowed by the standing allow", d)
	}
	if len(st.seen) != 1 || st.seen[0] != "gate" {
		t.Fatalf("StandingAllowed saw context values %v; want [gate]", st.seen)
	}
}

// catalogOf knows the tools it maps, each read-only or not.
type catalogOf map[string]bool

func (c catalogOf) Specs() []llm.ToolSpec { return nil }
func (c catalogOf) ReadOnly(name string) (bool, bool) {
	ro, ok := c[name]
	return ro, ok
}
func (catalogOf) CheckArgs(string, string) error { return nil }

// TestPolicyDefaults: with no rule matching, a read-only built-in tool is
// allowed, any other is held, and an MCP tool is held even when its server
// calls it read-only; a rule still decides for an MCP tool.
func TestPolicyDefaults(t *testing.T) {
	cat := catalogOf{"read": true, "write": false, "mcp__fs__read": true, "mcp__gh__list": true}
	g := &core.PolicyGate{Catalog: cat, Rules: []core.Rule{{Tool: "mcp__gh__*", Decision: core.Allow}}}
	for _, tc := range []struct {
		tool string
		want core.Verdict
		rule string
	}{
		{"read", core.Allow, "default: read-only tool"},
		{"write", core.NeedsApproval, "default: tool changes things"},
		{"mcp__fs__read", core.NeedsApproval, "default: MCP tool"},
		{"mcp__gh__list", core.Allow, ""},
	} {
		d := g.Check(context.Background(), core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: tc.tool, Args: `{}`}})
		if d.Verdict != tc.want || (tc.rule != "" && d.Rule != tc.rule) {
			t.Errorf("%s: %v (%s); want %v (%s)", tc.tool, d.Verdict, d.Rule, tc.want, tc.rule)
		}
	}
}
