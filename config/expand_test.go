package config

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	lookup := env(map[string]string{"A": "alpha", "EMPTY": "", "B_2": "b"})
	tests := []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"${A}", "alpha", ""},
		{"x-${A}-${B_2}", "x-alpha-b", ""},
		{"${UNSET}", "", ""},
		{"${UNSET:-dflt}", "dflt", ""},
		{"${EMPTY:-dflt}", "dflt", ""},
		{"${A:-dflt}", "alpha", ""},
		{"${UNSET:-}", "", ""},
		{"${UNSET:-a:b/c}", "a:b/c", ""},
		{"$${A}", "${A}", ""},
		{"cost $$5", "cost $5", ""},
		{"pa$word", "pa$word", ""},
		{"end$", "end$", ""},
		{"${A", "", "unterminated"},
		{"${}", "", "bad variable reference"},
		{"${9X}", "", "bad variable reference"},
		{"${A-x}", "", "bad variable reference"},
		{"${A:x}", "", "bad variable reference"},
	}
	for _, tt := range tests {
		got, err := expand(tt.in, lookup)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("expand(%q) error = %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestReferencesInFlowCollections: YAML forbids { and } in plain scalars
// inside {…} and […], yet the documented examples write them unquoted.
func TestReferencesInFlowCollections(t *testing.T) {
	src := `
llm:
  providers:
    - {name: openai, base_url: ${BASE:-https://api.openai.com/v1}, api_key: ${KEY}, model: gpt-4o-mini}
gateways:
  telegram: {token: ${TG}, api_url: https://api.telegram.org, allow: [${ME}, "${YOU}", '7']}
hitl: {approvers: [console:local, "telegram:${ME}"], notify: [telegram:${CHAT:--100}]}
store: {dsn: '$${literal}'}
`
	c := mustParse(t, src, env(map[string]string{"KEY": "k-123456", "TG": "1:tok", "ME": "42", "YOU": "43"}))
	p := c.LLM.Providers[0]
	if p.BaseURL != "https://api.openai.com/v1" || p.APIKey.Value() != "k-123456" || p.Name != "openai" {
		t.Errorf("provider = %+v", p)
	}
	tg := telegramOf(c)
	if tg.Token.Value() != "1:tok" || strings.Join(tg.Allow(), ",") != "42,43,7" {
		t.Errorf("telegram = %+v", tg)
	}
	if strings.Join(c.HITL.Approvers, ",") != "console:local,telegram:42" || c.HITL.Notify[0] != "telegram:-100" {
		t.Errorf("hitl = %+v", c.HITL)
	}
	if c.Store.DSN.Value() != "${literal}" {
		t.Errorf("dsn = %q", c.Store.DSN.Value())
	}
}

func TestKeysAreNotExpanded(t *testing.T) {
	_, err := Parse([]byte("log:\n  ${K}: info\n"), env(map[string]string{"K": "level"}), specs())
	if err == nil || err.Error() != "config: log.${K}: unknown key (line 2)" {
		t.Errorf("err = %v", err)
	}
}

func TestExpandedValuesAreNotYAML(t *testing.T) {
	c := mustParse(t, "tools: {workspace: '${W}'}\n", env(map[string]string{"W": "a: [b]\nc: d"}))
	if c.Tools.Workspace != "a: [b]\nc: d" {
		t.Errorf("workspace = %q", c.Tools.Workspace)
	}
}

func TestEmptyValueKeepsDefault(t *testing.T) {
	c := mustParse(t, `
llm: {max_steps: "${STEPS}", timeout: "${T}"}
gateways: {console: {enabled: "${CONSOLE}"}}
tools: {http: {allow_private: "${PRIV}"}}
`, noEnv)
	if c.LLM.MaxSteps != 10 || c.LLM.Timeout.D().String() != "1m0s" || consoleOf(c).Enable != nil || c.Tools.HTTP.AllowPrivate {
		t.Errorf("unset variables should keep defaults: %+v %+v", c.LLM, consoleOf(c))
	}
	c = mustParse(t, "llm: {max_steps: '${STEPS}'}\ngateways: {console: {enabled: '${CONSOLE}'}}\n",
		env(map[string]string{"STEPS": "7", "CONSOLE": "false"}))
	if c.LLM.MaxSteps != 7 || c.Gateways.Enabled("console") {
		t.Errorf("set variables: max_steps %d console %v", c.LLM.MaxSteps, c.Gateways.Enabled("console"))
	}
}

func TestPlaceholderPrefixCollision(t *testing.T) {
	c := mustParse(t, "tools: {workspace: '__gatehouse_ref0_${W}'}\n", env(map[string]string{"W": "x"}))
	if c.Tools.Workspace != "__gatehouse_ref0_x" {
		t.Errorf("workspace = %q", c.Tools.Workspace)
	}
}

func TestAliasesResolve(t *testing.T) {
	c := mustParse(t, `
hitl:
  approvers: &admins [telegram:1, slack:U2]
  notify: [telegram:-5]
gateways:
  telegram: {allow: *admins}
`, noEnv)
	if strings.Join(telegramOf(c).AllowList, ",") != "telegram:1,slack:U2" {
		t.Errorf("allow = %q", telegramOf(c).AllowList)
	}
}
