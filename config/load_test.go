package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// env returns a lookup function over a fixed map.
func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := kv[k]
		return v, ok
	}
}

var noEnv = env(nil)

func mustParse(t *testing.T, src string, lookup func(string) (string, bool)) *Config {
	t.Helper()
	c, err := Parse([]byte(src), lookup, specs())
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestDefaultFileLoadsOffline(t *testing.T) {
	c, err := Load("testdata/default.yaml", noEnv, specs())
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LLM.Providers[0]; got.BaseURL != "https://api.openai.com/v1" || got.Model != "gpt-4o-mini" || got.APIKey != "" || got.Timeout.D() != time.Minute {
		t.Errorf("provider = %+v", got)
	}
	g := c.Gateways
	if !g.Enabled("console") || g.Enabled("telegram") || g.Enabled("discord") || g.Enabled("slack") {
		t.Errorf("without tokens only the console runs: %+v", g)
	}
	if c.Tools.Timeouts["shell"].D() != 300*time.Second || len(c.Policy.Rules) != 2 || c.Store.Retention.D() != 2160*time.Hour {
		t.Errorf("tools/policy/store = %+v %+v %+v", c.Tools, c.Policy, c.Store)
	}
	if len(c.Secrets()) != 0 {
		t.Errorf("Secrets() = %d values, want none", len(c.Secrets()))
	}
}

func TestDefaultFileMatchesDefault(t *testing.T) {
	c, err := Load("testdata/default.yaml", noEnv, specs())
	if err != nil {
		t.Fatal(err)
	}
	// The file spells out the defaults, plus a provider, timeouts and rules.
	c.LLM.Providers, c.Tools.Timeouts, c.Policy.Rules = nil, nil, nil
	consoleOf(c).Enable = nil
	got, _ := yaml.Marshal(c)
	def := Default(specs())
	if err := def.resolvePaths("testdata"); err != nil { // as Load does
		t.Fatal(err)
	}
	want, _ := yaml.Marshal(def)
	if string(got) != string(want) {
		t.Errorf("default.yaml drifted from Default(specs()):\n got %s\nwant %s", got, want)
	}
}

func TestDefaultFileWithEnv(t *testing.T) {
	c, err := Load("testdata/default.yaml", env(map[string]string{
		"OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_MODEL": "llama3",
		"TELEGRAM_BOT_TOKEN": "123:tg-token", "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1",
	}), specs())
	if err != nil {
		t.Fatal(err)
	}
	if p := c.LLM.Providers[0]; p.APIKey.Value() != "sk-test-0123456789" || p.Model != "llama3" {
		t.Errorf("provider = %q %q", p.APIKey.Value(), p.Model)
	}
	if !c.Gateways.Enabled("telegram") || !c.Gateways.Enabled("slack") || c.Gateways.Enabled("discord") {
		t.Errorf("enabled: telegram %v slack %v discord %v", c.Gateways.Enabled("telegram"),
			c.Gateways.Enabled("slack"), c.Gateways.Enabled("discord"))
	}
}

func TestEmptyDocumentIsDefault(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n", "---\n"} {
		if c := mustParse(t, src, noEnv); !reflect.DeepEqual(c, Default(specs())) {
			t.Errorf("Parse(%q) = %+v, want defaults", src, c)
		}
	}
}

func TestDefaultRoundTripsThroughYAML(t *testing.T) {
	out, err := yaml.Marshal(Default(specs()))
	if err != nil {
		t.Fatal(err)
	}
	// The DSN is a Secret: it marshals as "<secret>", as it must.
	c := mustParse(t, strings.Replace(string(out), "<secret>", "gatehouse.db", 1), noEnv)
	again, err := yaml.Marshal(c)
	if err != nil || string(again) != string(out) {
		t.Errorf("round trip changed the config:\n%s\n---\n%s", out, again)
	}
}

func TestOverlayKeepsOtherDefaults(t *testing.T) {
	c := mustParse(t, "llm: {max_steps: 3}\nhitl: {approvers: [telegram:42]}\n", noEnv)
	if c.LLM.MaxSteps != 3 || c.LLM.Timeout.D() != time.Minute || c.LLM.History != 40 {
		t.Errorf("llm = %+v", c.LLM)
	}
	if !reflect.DeepEqual(c.HITL.Approvers, []string{"telegram:42"}) || c.HITL.TTL.D() != 15*time.Minute {
		t.Errorf("a list replaces its default: %+v", c.HITL)
	}
}

func TestProviderDerivedDefaults(t *testing.T) {
	c := mustParse(t, `
llm:
  timeout: 20s
  providers:
    - {base_url: "http://127.0.0.1:11434/v1"}
    - {name: b, base_url: "https://example.com/v1", model: m, timeout: 5s, stream: true}
`, noEnv)
	p0, p1 := c.LLM.Providers[0], c.LLM.Providers[1]
	if p0.Name != "127.0.0.1:11434" || p0.Model != defaultModel || p0.Timeout.D() != 20*time.Second {
		t.Errorf("providers[0] = %+v", p0)
	}
	if p1.Name != "b" || p1.Model != "m" || p1.Timeout.D() != 5*time.Second || !p1.Stream {
		t.Errorf("providers[1] = %+v", p1)
	}
}

func TestSlackAPIURLGetsTrailingSlash(t *testing.T) {
	c := mustParse(t, "gateways: {slack: {api_url: http://127.0.0.1:1/api}}\n", noEnv)
	if slackOf(c).APIURL != "http://127.0.0.1:1/api/" {
		t.Errorf("api_url = %q", slackOf(c).APIURL)
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(path, noEnv, specs())
	e, ok := errors.AsType[*Error](err)
	if !ok || e.File != path || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load = %v, want *Error wrapping fs.ErrNotExist", err)
	}
	if strings.Count(err.Error(), path) != 1 {
		t.Errorf("path repeated: %v", err)
	}
}

func TestLoadErrorNamesFileAndLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("llm:\n  timeout: 5x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, noEnv, specs())
	want := `config: llm.timeout: bad duration "5x" (` + path + `:2)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestNilLookupUsesEnvironment(t *testing.T) {
	t.Setenv("GATEHOUSE_TEST_MODEL", "from-env")
	c := mustParse(t, "llm: {providers: [{base_url: 'http://h/v1', model: '${GATEHOUSE_TEST_MODEL}'}]}\n", nil)
	if c.LLM.Providers[0].Model != "from-env" {
		t.Errorf("model = %q", c.LLM.Providers[0].Model)
	}
}

func TestRuleMatches(t *testing.T) {
	c := mustParse(t, `
policy:
  rules:
    - {tool: shell, args: 'rm\s+-rf', decision: deny}
    - {tool: "mcp_*", decision: approve}
    - {tool: "*", decision: allow}
`, noEnv)
	r := c.Policy.Rules
	tests := []struct {
		rule       Rule
		tool, args string
		want       bool
	}{
		{r[0], "shell", `{"cmd":"rm -rf /"}`, true},
		{r[0], "shell", `{"cmd":"ls"}`, false},
		{r[0], "http_get", `{"cmd":"rm -rf /"}`, false},
		{r[1], "mcp_github", `{}`, true},
		{r[1], "shell", `{}`, false},
		{r[2], "anything", `{}`, true},
		{Rule{Tool: "x", Args: "a+"}, "x", "aaa", true}, // built by hand: compiled on use
		{Rule{Tool: "x", Args: "("}, "x", "(", false},   // uncompilable: matches nothing
		{Rule{Tool: "[", Decision: "allow"}, "[", "", false},
	}
	for _, tt := range tests {
		if got := tt.rule.Matches(tt.tool, tt.args); got != tt.want {
			t.Errorf("%+v.Matches(%q, %q) = %v, want %v", tt.rule, tt.tool, tt.args, got, tt.want)
		}
	}
	if r[0].Verdict().String() != "deny" || r[1].Verdict().String() != "approve" || r[2].Verdict().String() != "allow" {
		t.Errorf("verdicts %v %v %v", r[0].Verdict(), r[1].Verdict(), r[2].Verdict())
	}
}
