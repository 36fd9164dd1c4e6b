package config

import (
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// testSection is a gateway section defined here, not by a gateway package:
// the configuration knows gateways only through the table it is handed.
type testSection struct {
	Enable *bool          `yaml:"enabled"`
	Key    confkit.Secret `yaml:"key"`
	Hook   string         `yaml:"hook_url"`
	Depth  int            `yaml:"depth"`
	People []string       `yaml:"allow"`
}

func (s *testSection) Enabled() bool { return confkit.Enabled(s.Enable, s.Key != "") }

func (s *testSection) Check(c *confkit.Checker, _ confkit.Globals) {
	c.Credentials(s.Enable, confkit.Credential{Key: "key", Set: s.Key != ""})
	c.IntRange("depth", s.Depth, 1, 9)
}

func (s *testSection) Secrets() []confkit.Secret { return []confkit.Secret{s.Key} }
func (s *testSection) URLs() []string            { return []string{s.Hook} }
func (s *testSection) Allow() []string           { return s.People }

func testTable() []GatewaySpec {
	return []GatewaySpec{{
		Name:             "pigeon",
		New:              func() confkit.Section { return &testSection{Depth: 3} },
		DefaultApprovers: []string{"pigeon:loft"},
	}}
}

func TestTableDrivesGatewaySections(t *testing.T) {
	c, err := Parse([]byte(`
gateways:
  pigeon: {key: "${PIGEON_KEY}", hook_url: "https://u:hookpass-2718@hooks.example.com", depth: 5, allow: [a, b]}
hitl: {notify: ["pigeon:coop:7"]}
`), env(map[string]string{"PIGEON_KEY": "pigeon-secret-3141"}), testTable())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := c.Gateways.Section("pigeon").(*testSection)
	if !ok || s.Key.Value() != "pigeon-secret-3141" || s.Depth != 5 || strings.Join(s.People, ",") != "a,b" {
		t.Fatalf("pigeon section = %#v", c.Gateways.Section("pigeon"))
	}
	if !c.Gateways.Enabled("pigeon") || strings.Join(c.Gateways.Names(), ",") != "pigeon" {
		t.Errorf("names %v, enabled %v", c.Gateways.Names(), c.Gateways.Enabled("pigeon"))
	}
	if strings.Join(c.HITL.Approvers, ",") != "pigeon:loft" {
		t.Errorf("default approvers = %v, want the table's", c.HITL.Approvers)
	}
	got := strings.Join(c.Secrets(), " ")
	for _, want := range []string{"pigeon-secret-3141", "hookpass-2718"} {
		if !strings.Contains(got, want) {
			t.Errorf("Secrets() = %q, misses %q", got, want)
		}
	}
	if d := mustParseWith(t, "", testTable()); d.Gateways.Section("pigeon").(*testSection).Depth != 3 {
		t.Errorf("an absent section does not keep its defaults")
	}
}

func TestTableGatewayErrors(t *testing.T) {
	tests := []struct{ name, src, key, msg string }{
		{"unknown key in a table section", "gateways:\n  pigeon:\n    colour: grey\n", "gateways.pigeon.colour", "unknown key"},
		{"gateway not in the table", "gateways:\n  telegram: {token: t}\n", "gateways.telegram", "unknown key"},
		{"section check names its key", "gateways: {pigeon: {depth: 12}}\n", "gateways.pigeon.depth", "out of range 1..9"},
		{"credentials rule", "gateways: {pigeon: {enabled: true}}\n", "gateways.pigeon.key", "required when gateways.pigeon.enabled is true"},
		{"identity of a gateway not in the table", "hitl: {approvers: ['telegram:1']}\n", "hitl.approvers[0]", `unknown gateway "telegram"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), noEnv, testTable())
			e, ok := err.(*Error)
			if !ok || e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("err = %v; want key %s and %q", err, tt.key, tt.msg)
			}
		})
	}
}

func mustParseWith(t *testing.T, src string, table []GatewaySpec) *Config {
	t.Helper()
	c, err := Parse([]byte(src), noEnv, table)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}
