package core

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// MCPPrefix starts the name of every tool an MCP server offers
// ("mcp__<server>__<tool>"). No rule matching, such a tool is held for
// approval, whatever the server says of it.
const MCPPrefix = "mcp__"

// Rule is one policy rule: a tool name pattern ("*" globs, path.Match
// syntax), an optional regular expression over the arguments' JSON, and the
// decision for a match.
type Rule struct {
	Tool     string
	Args     *regexp.Regexp // nil matches any arguments
	Decision Verdict
}

// Matches reports whether the rule applies to a call of tool with args.
func (r Rule) Matches(tool, args string) bool {
	ok, err := path.Match(r.Tool, tool)
	if err != nil || !ok {
		return false
	}
	return r.Args == nil || r.Args.MatchString(args)
}

// PolicyGate applies policy.rules to tool calls: first match wins. A tool no
// rule matches is allowed when it is a read-only built-in tool and held for
// approval otherwise (an MCP tool always). Replies pass. An approval decision is relaxed to allow when a
// human gave a standing allow for exactly this call; a deny never is.
type PolicyGate struct {
	Rules    []Rule
	Catalog  ToolCatalog
	Standing StandingAllows // may be nil
}

var _ Gate = (*PolicyGate)(nil)

// Check implements Gate.
func (g *PolicyGate) Check(ctx context.Context, a Action) Decision {
	if a.Kind != ActionTool {
		return Decision{Verdict: Allow}
	}
	name, args := a.Call.Name, a.Call.Args
	readOnly, known := g.Catalog.ReadOnly(name)
	if !known {
		return Decision{Verdict: Deny, Rule: "unknown tool",
			Reason: fmt.Sprintf("there is no tool named %q; use one of the tools offered", name)}
	}
	d := g.decide(name, args, readOnly)
	if d.Verdict == NeedsApproval && g.Standing != nil && g.Standing.StandingAllowed(ctx, name, args) {
		return Decision{Verdict: Allow, Rule: "standing allow"}
	}
	return d
}

func (g *PolicyGate) decide(name, args string, readOnly bool) Decision {
	for i, r := range g.Rules {
		if !r.Matches(name, args) {
			continue
		}
		d := Decision{Verdict: r.Decision, Rule: fmt.Sprintf("policy.rules[%d] (tool %s → %s)", i, r.Tool, r.Decision)}
		if d.Verdict == Deny {
			d.Reason = fmt.Sprintf("the policy forbids this %s call", name)
		}
		return d
	}
	if strings.HasPrefix(name, MCPPrefix) {
		// An MCP server's own read-only hint is the server's word, not the
		// operator's: only a rule allows its tools without a human.
		return Decision{Verdict: NeedsApproval, Rule: "default: MCP tool"}
	}
	if readOnly {
		return Decision{Verdict: Allow, Rule: "default: read-only tool"}
	}
	return Decision{Verdict: NeedsApproval, Rule: "default: tool changes things"}
}
