package core_test

import (
	"context"
	"regexp"
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
func (writerCatalog) CheckArgs(context.Context, string, string) error { return nil }

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
func (catalogOf) CheckArgs(context.Context, string, string) error { return nil }

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

// TestRuleText: a rule renders as the YAML flow mapping it is written as,
// with its 1-based index in its name, and decisions name the rule so.
func TestRuleText(t *testing.T) {
	for _, tc := range []struct {
		rule core.Rule
		want string
	}{
		{core.Rule{Index: 1, Tool: "shell", Args: regexp.MustCompile(`rm\s+-rf`), Decision: core.Deny},
			`#1 {tool: shell, args: "rm\\s+-rf", decision: deny}`},
		{core.Rule{Index: 3, Tool: "*", Decision: core.Allow}, `#3 {tool: "*", decision: allow}`},
		{core.Rule{Index: 2, Tool: "mcp__gh__*", Decision: core.NeedsApproval}, `#2 {tool: "mcp__gh__*", decision: approve}`},
		{core.Rule{Index: 4, Tool: "null", Decision: core.Allow}, `#4 {tool: "null", decision: allow}`},
		{core.Rule{Tool: "write_file", Decision: core.NeedsApproval}, `{tool: write_file, decision: approve}`},
	} {
		if got := tc.rule.Name(); got != tc.want {
			t.Errorf("Name() = %s; want %s", got, tc.want)
		}
	}
	g := &core.PolicyGate{Catalog: writerCatalog{}, Rules: []core.Rule{
		{Index: 1, Tool: "write", Args: regexp.MustCompile(`"path":"etc/`), Decision: core.Deny},
		{Index: 2, Tool: "w*", Decision: core.NeedsApproval},
	}}
	a := core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: "write", Args: `{"path":"a"}`}}
	j := g.Judge(context.Background(), a)
	if j.Rule == nil || j.Rule.Index != 2 || j.Decision.Rule != `#2 {tool: "w*", decision: approve}` || j.Decision.Verdict != core.NeedsApproval {
		t.Errorf("Judge = %+v; want held by rule #2", j)
	}
	a.Call.Args = `{"path":"etc/passwd"}`
	if j := g.Judge(context.Background(), a); j.Rule == nil || j.Rule.Index != 1 || j.Decision.Verdict != core.Deny || j.Decision.Reason == "" {
		t.Errorf("Judge = %+v; want denied by rule #1 with a reason", j)
	}
}

// TestJudgeStanding: a standing allow relaxes approve to allow, and the
// judgement keeps the rule's own decision; it never relaxes a deny.
func TestJudgeStanding(t *testing.T) {
	ctx := context.WithValue(context.Background(), ctxKey{}, "gate")
	a := core.Action{Kind: core.ActionTool, Call: llm.ToolCall{Name: "write", Args: `{}`}}
	g := &core.PolicyGate{Catalog: writerCatalog{}, Standing: &ctxStanding{},
		Rules: []core.Rule{{Index: 1, Tool: "write", Decision: core.NeedsApproval}}}
	j := g.Judge(ctx, a)
	if !j.Standing || j.Decision.Verdict != core.Allow || j.Policy.Verdict != core.NeedsApproval || j.Rule == nil {
		t.Errorf("Judge = %+v; want approve by #1 relaxed to allow by the standing allow", j)
	}
	g.Rules[0].Decision = core.Deny
	if j := g.Judge(ctx, a); j.Standing || j.Decision.Verdict != core.Deny {
		t.Errorf("Judge = %+v; want deny, never relaxed", j)
	}
}

// TestLooseShellAllow: an allow rule on shell whose pattern is not
// anchored at both ends of the arguments' JSON is loose — it allows
// `kubectl get pods; curl … | sh` — whatever the anchors' spelling or
// place; a pattern anchored on every path is not, nor is a deny or
// approve rule, a rule on another tool, or one without a pattern.
func TestLooseShellAllow(t *testing.T) {
	cases := []struct {
		tool, args string
		decision   core.Verdict
		loose      bool
	}{
		{"shell", `"command":"kubectl get `, core.Allow, true},
		{"shell", `^\{"command":"kubectl get `, core.Allow, true},
		{"shell", `"command":"kubectl get pods"\}$`, core.Allow, true},
		{"shell", `^\{"command":"kubectl get pods"\}|x$`, core.Allow, true},
		{"shell", `(?m)^\{"command":"kubectl get pods"\}$`, core.Allow, true},
		{"sh*", `kubectl`, core.Allow, true},
		{"*", `kubectl`, core.Allow, true},
		{"shell", `^\{"command":"kubectl get pods"\}$`, core.Allow, false},
		{"shell", `\A\{"command":"kubectl get pods"\}\z`, core.Allow, false},
		{"shell", `^\{"command":"kubectl get (pods|nodes)"\}$`, core.Allow, false},
		{"shell", `^\{"command":"ls"\}$|^\{"command":"pwd"\}$`, core.Allow, false},
		{"shell", `(^\{"command":"ls"\}$)`, core.Allow, false},
		{"shell", "", core.Allow, false},
		{"shell", `rm -rf`, core.Deny, false},
		{"shell", `kubectl`, core.NeedsApproval, false},
		{"http_get", `"url":"https://docs`, core.Allow, false},
		{"shell", `(`, core.Allow, false},
	}
	for _, c := range cases {
		if got := core.LooseShellAllow(c.tool, c.args, c.decision); got != c.loose {
			t.Errorf("LooseShellAllow(%q, %q, %s) = %v; want %v", c.tool, c.args, c.decision, got, c.loose)
		}
	}
	r := core.Rule{Tool: "shell", Args: regexp.MustCompile(`"command":"kubectl get `), Decision: core.Allow}
	if !r.LooseShellAllow() {
		t.Errorf("Rule %s is not loose", r)
	}
	if (core.Rule{Tool: "shell", Decision: core.Allow}).LooseShellAllow() {
		t.Error("a rule without a pattern is loose")
	}
}
