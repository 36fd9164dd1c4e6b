package config

import (
	"path"
	"regexp"

	"github.com/gatehouse-bot/gatehouse/core"
)

// Policy is the ordered list of tool-call rules.
type Policy struct {
	// Rules are tried in order; the first match decides. Empty leaves the
	// core's built-in policy.
	Rules []Rule `yaml:"rules"`
}

// Rule decisions.
const (
	DecisionAllow   = "allow"
	DecisionDeny    = "deny"
	DecisionApprove = "approve"
)

// Rule decides tool calls whose tool name matches Tool and whose arguments
// match Args.
type Rule struct {
	// Tool is a tool name or a path.Match glob ("*", "mcp_*").
	Tool string `yaml:"tool"`
	// Args is an optional Go regexp searched in the arguments' JSON text.
	Args string `yaml:"args"`
	// Decision is DecisionAllow, DecisionDeny or DecisionApprove.
	Decision string `yaml:"decision"`

	args *regexp.Regexp // Args compiled at load
}

// Matches reports whether the rule applies to a call of tool with the given
// JSON arguments. A rule that cannot compile (built by hand, not loaded)
// matches nothing.
func (r Rule) Matches(tool, args string) bool {
	if ok, err := path.Match(r.Tool, tool); err != nil || !ok {
		return false
	}
	if r.Args == "" {
		return true
	}
	re := r.args
	if re == nil {
		var err error
		if re, err = regexp.Compile(r.Args); err != nil {
			return false
		}
	}
	return re.MatchString(args)
}

// Verdict maps the decision onto the gate verdict; 0 when invalid.
func (r Rule) Verdict() core.Verdict {
	switch r.Decision {
	case DecisionAllow:
		return core.Allow
	case DecisionDeny:
		return core.Deny
	case DecisionApprove:
		return core.NeedsApproval
	}
	return 0
}
