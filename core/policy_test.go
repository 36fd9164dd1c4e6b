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
