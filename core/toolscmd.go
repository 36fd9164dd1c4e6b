package core

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// PolicyFor is the policy's decision for any call of tool name, for
// people (/tools): "allow", "approve", "deny", or "depends on arguments"
// when the first rule whose tool pattern matches also has an args
// pattern. Standing allows are not considered: they are per call. The
// rules are those in force (the last SetRules'), as Check uses them.
func (g *PolicyGate) PolicyFor(name string, readOnly bool) string {
	return g.policyIn(nil, name, readOnly)
}

// policyIn is PolicyFor in a conversation of profile p (nil: none): its
// rules first.
func (g *PolicyGate) policyIn(p *Profile, name string, readOnly bool) string {
	rules := g.rules()
	if p != nil {
		rules = append(slices.Clip(p.Rules), rules...)
	}
	for _, r := range rules {
		if ok, err := path.Match(r.Tool, name); err != nil || !ok {
			continue
		}
		if r.Args != nil {
			return "depends on arguments"
		}
		return r.Decision.String()
	}
	return DefaultDecision(name, readOnly).Verdict.String()
}

// toolsText answers /tools: every tool offered in conv (its profile's),
// where it comes from and what the policy decides for it there.
func (e *Engine) toolsText(conv Conversation) string {
	profile := e.cfg.Profiles.For(conv)
	specs := profile.offered(e.cfg.Tools.Specs())
	if len(specs) == 0 {
		return "No tools are offered."
	}
	var policy *PolicyGate
	for _, g := range e.cfg.Gates {
		if p, ok := g.(*PolicyGate); ok {
			policy = p
		}
	}
	lines := []string{fmt.Sprintf("Tools (%d):", len(specs))}
	for _, s := range specs {
		readOnly, _ := e.cfg.Tools.ReadOnly(s.Name)
		decision := DefaultDecision(s.Name, readOnly).Verdict.String()
		if policy != nil {
			decision = policy.policyIn(profile, s.Name, readOnly)
		}
		if alwaysHeld(e.cfg.Gates, s.Name) {
			decision = "approve (always)"
		}
		lines = append(lines, fmt.Sprintf("%s — %s — %s", textutil.Visible(s.Name), toolOrigin(s.Name), decision))
	}
	return strings.Join(lines, "\n")
}

// toolOrigin names where a tool comes from: "built-in" or "MCP server X".
func toolOrigin(name string) string {
	rest, ok := strings.CutPrefix(name, MCPPrefix)
	if !ok {
		return "built-in"
	}
	server, _, _ := strings.Cut(rest, "__")
	return "MCP server " + textutil.Visible(server)
}
