package core

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync/atomic"
)

// MCPPrefix starts the name of every tool an MCP server offers
// ("mcp__<server>__<tool>"). No rule matching, such a tool is held for
// approval, whatever the server says of it.
const MCPPrefix = "mcp__"

// Rule is one policy rule: a tool name pattern ("*" globs, path.Match
// syntax), an optional regular expression over the arguments' JSON, and the
// decision for a match.
type Rule struct {
	// Index is the rule's 1-based position in policy.rules; 0 for a rule
	// that does not come from a configuration.
	Index int
	// Profile names the profile whose policy.rules hold the rule; "" for
	// a rule of the top-level policy.rules.
	Profile  string
	Tool     string
	Args     *regexp.Regexp // nil matches any arguments
	Decision Verdict
}

// String renders the rule as it is written in policy.rules, a YAML flow
// mapping: {tool: shell, args: "rm -rf", decision: deny}. Read back as YAML
// it gives the same rule.
func (r Rule) String() string {
	var b strings.Builder
	b.WriteString("{tool: " + yamlScalar(r.Tool))
	if r.Args != nil {
		b.WriteString(", args: " + strconv.Quote(r.Args.String()))
	}
	b.WriteString(", decision: " + r.Decision.String() + "}")
	return b.String()
}

// Name is how decisions, approval requests, logs and `bot policy test`
// name the rule: "#2 {tool: shell, decision: approve}" (the 1-based index
// in policy.rules, then the rule as written).
//
// A profile's rule is named with its profile: "profile ops #1 {…}".
func (r Rule) Name() string {
	name := r.String()
	if r.Index != 0 {
		name = "#" + strconv.Itoa(r.Index) + " " + name
	}
	if r.Profile != "" {
		name = "profile " + r.Profile + " " + name
	}
	return name
}

// yamlScalar leaves a plain word as it is and double-quotes anything YAML
// could read otherwise ("*" is an alias, "mcp__*" is fine but "*_x" not).
func yamlScalar(s string) string {
	if s == "" {
		return `""`
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return strconv.Quote(s)
		}
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~":
		return strconv.Quote(s)
	}
	return s
}

// Matches reports whether the rule applies to a call of tool with args.
func (r Rule) Matches(tool, args string) bool {
	ok, err := path.Match(r.Tool, tool)
	if err != nil || !ok {
		return false
	}
	return r.Args == nil || r.Args.MatchString(args)
}

// LooseShellAllow reports whether the rule allows shell commands by an
// args pattern that is not anchored at both ends of the arguments' JSON:
// such a pattern allows whatever a command adds before or after what it
// names (`kubectl get pods; curl … | sh`, or a newline and another
// command). A rule without a pattern is no concern of it: it allows every
// shell command, plainly.
func (r Rule) LooseShellAllow() bool {
	if r.Args == nil {
		return false
	}
	return LooseShellAllow(r.Tool, r.Args.String(), r.Decision)
}

// shellTool is the built-in tool whose allow rules must name whole
// commands.
const shellTool = "shell"

// LooseShellAllow is Rule.LooseShellAllow for a rule as written: its tool
// glob, its args pattern ("" for none) and its decision. A pattern that
// does not compile is no concern of it (the configuration's check reports
// it).
func LooseShellAllow(tool, args string, decision Verdict) bool {
	if decision != Allow || args == "" {
		return false
	}
	if ok, err := path.Match(tool, shellTool); err != nil || !ok {
		return false
	}
	re, err := syntax.Parse(args, syntax.Perl) // the flags regexp.Compile uses
	return err == nil && !(anchored(re, true) && anchored(re, false))
}

// anchored reports whether every match of re begins at the start of the
// text (start) or ends at its end (!start): re begins with ^ or \A (ends
// with $ or \z) on every path. Under (?m), ^ and $ are a line's ends, so
// a pattern anchored only by them is not anchored; nor is one whose
// anchor sits in one alternative only (^a|b$).
func anchored(re *syntax.Regexp, start bool) bool {
	switch re.Op {
	case syntax.OpBeginText:
		return start
	case syntax.OpEndText:
		return !start
	case syntax.OpCapture:
		return anchored(re.Sub[0], start)
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return false
		}
		if start {
			return anchored(re.Sub[0], start)
		}
		return anchored(re.Sub[len(re.Sub)-1], start)
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !anchored(sub, start) {
				return false
			}
		}
		return true
	}
	return false
}

// PolicyGate applies policy.rules to tool calls: first match wins. A tool no
// rule matches is allowed when it is a read-only built-in tool and held for
// approval otherwise (an MCP tool always). Replies pass. An approval decision is relaxed to allow when a
// human gave a standing allow for exactly this call, or a grant for it in
// this conversation (when Standing also implements Grants); a deny never is.
//
// In a conversation with a profile (Profiles), a tool the profile does not
// offer is an unknown tool, and the profile's rules come before Rules.
type PolicyGate struct {
	Rules    []Rule
	Catalog  ToolCatalog
	Standing StandingAllows // may be nil
	Profiles *Profiles      // may be nil

	live atomic.Pointer[[]Rule] // set by SetRules; replaces Rules when set
}

// SetRules replaces the rules for the calls judged from now on (a
// configuration reload); a call being judged keeps the rules it started
// with. Safe beside Check; rules must not be changed afterwards.
func (g *PolicyGate) SetRules(rules []Rule) { g.live.Store(&rules) }

// rules returns the rules in force: the last SetRules', else Rules.
func (g *PolicyGate) rules() []Rule {
	if r := g.live.Load(); r != nil {
		return *r
	}
	return g.Rules
}

var _ Gate = (*PolicyGate)(nil)

// Check implements Gate.
func (g *PolicyGate) Check(ctx context.Context, a Action) Decision {
	return g.Judge(ctx, a).Decision
}

// Judgement is the policy's answer to one action with what led to it, for
// the gate and for `bot policy test`, which must say the same.
type Judgement struct {
	// Decision is the final answer, the one Check returns.
	Decision Decision
	// Policy is the rules' decision (or the default's) before any
	// standing allow relaxed it.
	Policy Decision
	// Rule is the rule that matched; nil when a default decided (or the
	// tool is unknown, or the action is no tool call).
	Rule *Rule
	// Standing is true when a standing allow relaxed approve to allow.
	Standing bool
	// Grant names the grant that relaxed approve to allow ("grant #7 by
	// …"); "" when none did.
	Grant string
	// Profile names the conversation's profile; "" when it has none.
	Profile string
}

// Judge decides a as Check does and says why.
func (g *PolicyGate) Judge(ctx context.Context, a Action) Judgement {
	if a.Kind != ActionTool {
		d := Decision{Verdict: Allow}
		return Judgement{Decision: d, Policy: d}
	}
	name, args := a.Call.Name, a.Call.Args
	j := Judgement{}
	profile := g.Profiles.For(a.Conv)
	if profile != nil {
		j.Profile = profile.Name
	}
	readOnly, known := g.Catalog.ReadOnly(name)
	if !known || !profile.Offers(name) {
		d := Decision{Verdict: Deny, Rule: "unknown tool",
			Reason: fmt.Sprintf("there is no tool named %q; use one of the tools offered", name)}
		j.Decision, j.Policy = d, d
		return j
	}
	if profile != nil {
		j.Rule = firstMatch(profile.Rules, name, args)
	}
	if j.Rule == nil {
		j.Rule = firstMatch(g.rules(), name, args)
	}
	if r := j.Rule; r != nil {
		j.Policy = Decision{Verdict: r.Decision, Rule: r.Name()}
		if r.Decision == Deny {
			j.Policy.Reason = fmt.Sprintf("the policy forbids this %s call", name)
		}
	}
	if j.Rule == nil {
		j.Policy = DefaultDecision(name, readOnly)
	}
	j.Decision = j.Policy
	if ApprovedOnce(name) {
		return j // a person approves exactly the content shown, each time
	}
	if j.Policy.Verdict == NeedsApproval && g.Standing != nil && g.Standing.StandingAllowed(ctx, name, args) {
		j.Decision, j.Standing = Decision{Verdict: Allow, Rule: "standing allow"}, true
		return j
	}
	if gr, ok := g.Standing.(Grants); ok && j.Policy.Verdict == NeedsApproval {
		if rule, ok := gr.Granted(ctx, a); ok {
			j.Decision, j.Grant = Decision{Verdict: Allow, Rule: rule}, rule
		}
	}
	return j
}

// firstMatch returns the first of rules that matches a call of tool with
// args, or nil.
func firstMatch(rules []Rule, tool, args string) *Rule {
	for i := range rules {
		if r := &rules[i]; r.Matches(tool, args) {
			return r
		}
	}
	return nil
}

// DefaultDecision is the policy's decision for a known tool that no rule
// matches: an MCP tool is held, a read-only built-in tool allowed, any
// other tool held.
func DefaultDecision(name string, readOnly bool) Decision {
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
