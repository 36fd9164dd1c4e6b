package config

import (
	"errors"
	"strings"
	"testing"
)

// profileProviders are two providers profiles may name.
const profileProviders = `llm:
  providers:
    - {name: openai, base_url: "https://api.openai.com/v1"}
    - {name: local, base_url: "http://localhost:11434/v1"}
`

func TestProfiles(t *testing.T) {
	c := mustParse(t, profileProviders+`profiles:
  - name: ops
    match: ["slack:C0OPS*", "discord:1181*"]
    providers: [openai]
    model: gpt-4o
    system_prompt: "You are the on-call assistant."
    tools: [shell, list_dir, read_file, "mcp__github__*"]
    policy: {rules: [{tool: shell, args: '"command":"kubectl get ', decision: allow}]}
    approvers: [slack:U0LEAD]
    budget: {conversation_daily_tokens: 200000}
  - name: family
    match: ["telegram:*"]
    tools: []
`, noEnv)
	if len(c.Profiles) != 2 {
		t.Fatalf("profiles = %+v", c.Profiles)
	}
	ops, family := c.Profiles[0], c.Profiles[1]
	if ops.Name != "ops" || len(ops.Match) != 2 || ops.Model != "gpt-4o" || len(ops.Tools) != 4 ||
		len(ops.Policy.Rules) != 1 || !ops.Policy.Rules[0].Matches("shell", `{"command":"kubectl get pods"}`) ||
		ops.Approvers[0] != "slack:U0LEAD" || ops.Budget.ConversationDailyTokens != 200000 {
		t.Errorf("ops = %+v", ops)
	}
	if got := strings.Join(ops.ProviderNames(c.LLM.Providers), ","); got != "openai" {
		t.Errorf("ops providers = %s", got)
	}
	if got := strings.Join(family.ProviderNames(c.LLM.Providers), ","); got != "openai,local" {
		t.Errorf("family providers = %s, want all", got)
	}
	if family.Tools == nil || len(family.Tools) != 0 {
		t.Errorf("family tools = %#v, want an empty list (no tool), not absent (all)", family.Tools)
	}
}

// TestProfileErrors: each mistake names its key; exit 2 follows from the
// *Error (cmd/bot).
func TestProfileErrors(t *testing.T) {
	for _, tt := range []struct{ src, key, msg string }{
		{`{name: ops}`, "profiles[0].match", "at least one"},
		{`{name: "o p", match: ["slack:C1"]}`, "profiles[0].name", "letters"},
		{`{name: ops, match: ["slack:C1", "slack:[C"]}`, "profiles[0].match[1]", "bad glob"},
		{`{name: ops, match: ["slack"]}`, "profiles[0].match[0]", "gateway:chat"},
		{`{name: ops, match: ["pigeon:C1"]}`, "profiles[0].match[0]", "unknown gateway"},
		{`{name: ops, match: ["slack:C1"], providers: [openai, nope]}`, "profiles[0].providers[1]", `unknown provider "nope"`},
		{`{name: ops, match: ["slack:C1"], providers: [local, local]}`, "profiles[0].providers[1]", "twice"},
		{`{name: ops, match: ["slack:C1"], tools: [shell, "mcp__[x"]}`, "profiles[0].tools[1]", "bad glob"},
		{`{name: ops, match: ["slack:C1"], skills: ["restart-*", "cert-[x"]}`, "profiles[0].skills[1]", "bad glob"},
		{`{name: ops, match: ["slack:C1"], policy: {rules: [{tool: shell, decision: maybe}]}}`, "profiles[0].policy.rules[0].decision", "maybe"},
		{`{name: ops, match: ["slack:C1"], policy: {rules: [{tool: shell, args: "(", decision: deny}]}}`, "profiles[0].policy.rules[0].args", "regexp"},
		{`{name: ops, match: ["slack:C1"], approvers: [lead]}`, "profiles[0].approvers[0]", "identity"},
		{`{name: ops, match: ["slack:C1"], approvers: ["schedule:x"]}`, "profiles[0].approvers[0]", "schedule"},
		{`{name: ops, match: ["slack:C1"], budget: {conversation_daily_tokens: -1}}`, "profiles[0].budget.conversation_daily_tokens", "0 or more"},
		{`{name: ops, match: ["slack:C1"], budget: {daily_usd: 1}}`, "profiles[0].budget.daily_usd", "unknown key"},
		{`{name: ops, match: ["slack:C1"], colour: red}`, "profiles[0].colour", "unknown key"},
	} {
		_, err := Parse([]byte(profileProviders+"profiles:\n  - "+tt.src+"\n"), noEnv, specs())
		var e *Error
		if !errors.As(err, &e) || e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%s: got %v, want key %s msg ~%q", tt.src, err, tt.key, tt.msg)
		}
	}
	_, err := Parse([]byte(profileProviders+"profiles:\n  - {name: ops, match: [\"slack:A\"]}\n  - {name: ops, match: [\"slack:B\"]}\n"), noEnv, specs())
	var e *Error
	if !errors.As(err, &e) || e.Key != "profiles[1].name" || !strings.Contains(e.Msg, "duplicate profile name") {
		t.Errorf("duplicate names: %v", err)
	}
	if _, err := Parse([]byte("profiles:\n  - {name: ops, match: [\"*:C1\"], providers: [openai]}\n"), noEnv, specs()); err == nil ||
		!strings.Contains(err.Error(), "profiles[0].providers[0]") {
		t.Errorf("a provider without llm.providers: %v", err)
	}
}
