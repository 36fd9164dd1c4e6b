package main

import (
	"fmt"
	"path"
	"strings"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// doctorProfiles describes each profile and warns of what makes one not
// do what it says: a tool glob that matches no tool (the built-in ones
// and mcpTools, the tools of the MCP servers that started; mcpDown did
// not), providers none of which is usable, an approver on a gateway that
// does not run. The globs and provider names were checked when the
// configuration loaded.
func doctorProfiles(r *report, cfg *config.Config, sec *secrets.Set, mcpTools, mcpDown []string) {
	if len(cfg.Profiles) == 0 {
		return
	}
	builtins, err := builtinToolNames(cfg, sec)
	if err != nil {
		r.problem("profiles", "the built-in tools: %v", err)
		return
	}
	known := append(builtins, mcpTools...)
	for i, p := range cfg.Profiles {
		key := fmt.Sprintf("profiles[%d]", i)
		r.line("profiles", "%s", profileLine(cfg, p))
		for j, g := range p.Tools {
			if !matchesAny(g, known) {
				unknown := ""
				if len(mcpDown) > 0 {
					unknown = fmt.Sprintf("; the tools of MCP server %s are unknown: it did not start", strings.Join(mcpDown, ", "))
				}
				r.warning("profiles", "%s.tools[%d]: %s matches no tool (%s)%s", key, j, textutil.Visible(g), strings.Join(known, ", "), unknown)
			}
		}
		for j, rule := range p.Policy.Rules {
			if core.LooseShellAllow(rule.Tool, rule.Args, rule.Verdict()) {
				r.warning("profiles", "%s.policy.rules[%d]: %s", key, j, looseShellWarning)
			}
		}
		usable := 0
		for _, name := range p.ProviderNames(cfg.LLM.Providers) {
			for _, pr := range cfg.LLM.Providers {
				if pr.Name == name && app.ProviderSkipped(pr) == "" {
					usable++
				}
			}
		}
		if usable == 0 && (len(p.Providers) > 0 || p.Model != "") {
			r.warning("profiles", "%s: none of its providers is usable (see llm above): its conversations get the offline demo model", key)
		}
	}
	profilesGateways(r, cfg)
}

// profilesGateways warns of a match glob and of an approver on a gateway
// that does not run: the glob matches no conversation, nobody there can
// approve.
func profilesGateways(r *report, cfg *config.Config) {
	sections, err := gatewaytable.Sections(cfg.Gateways)
	if err != nil {
		r.problem("profiles", "%v", err)
		return
	}
	runs := map[string]bool{}
	for _, s := range sections {
		runs[s.Name] = s.Section.Doctor().Runs
	}
	for i, p := range cfg.Profiles {
		for j, g := range p.Match {
			gw, _, _ := strings.Cut(g, ":")
			if !strings.ContainsAny(gw, `*?[\`) && !runs[gw] {
				r.warning("profiles", "profiles[%d].match[%d]: %s is not enabled, so %s matches no conversation", i, j, gw, textutil.Visible(g))
			}
		}
		for j, id := range p.Approvers {
			g, _, _ := strings.Cut(id, ":")
			if !runs[g] {
				r.warning("profiles", "profiles[%d].approvers[%d]: %s is on %s, which is not enabled", i, j, id, g)
			}
		}
	}
}

// profileLine says what a profile gives its conversations.
func profileLine(cfg *config.Config, p config.Profile) string {
	parts := []string{p.Name + ": " + strings.Join(p.Match, ", ")}
	if len(p.Providers) > 0 || p.Model != "" {
		model := ""
		if p.Model != "" {
			model = " with model " + p.Model
		}
		parts = append(parts, "providers "+strings.Join(p.ProviderNames(cfg.LLM.Providers), ", then ")+model)
	}
	if p.SystemPrompt != "" {
		parts = append(parts, "its own system prompt")
	}
	switch {
	case p.Tools == nil:
	case len(p.Tools) == 0:
		parts = append(parts, "no tools")
	default:
		parts = append(parts, "tools "+strings.Join(p.Tools, ", "))
	}
	if n := len(p.Policy.Rules); n > 0 {
		parts = append(parts, fmt.Sprintf("%d rule(s) before policy.rules", n))
	}
	if len(p.Approvers) > 0 {
		parts = append(parts, "approvers "+strings.Join(p.Approvers, ", "))
	}
	if n := p.Budget.ConversationDailyTokens; n > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens a conversation a day", n))
	}
	return textutil.Visible(strings.Join(parts, "; "))
}

// matchesAny reports whether glob matches one of names.
func matchesAny(glob string, names []string) bool {
	for _, n := range names {
		if ok, _ := path.Match(glob, n); ok {
			return true
		}
	}
	return false
}

// builtinToolNames lists the built-in tools, registered over a scratch
// workspace as `bot policy test` does.
func builtinToolNames(cfg *config.Config, sec *secrets.Set) ([]string, error) {
	j, err := newJudge(cfg, sec)
	if err != nil {
		return nil, err
	}
	defer j.cleanup()
	specs := j.catalog.Specs()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names, nil
}
