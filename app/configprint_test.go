package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/config"
)

func parseConfig(t *testing.T, yaml string, env map[string]string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestConfigFingerprint: two configurations that differ in their policy
// rules and their provider list differ in exactly policy.rules and
// llm.providers; store.instance, which differs by design, is left out;
// no secret, nor its hash alone, is in the fingerprint, and a different
// secret does not change it (it is redacted first).
func TestConfigFingerprint(t *testing.T) {
	const base = `llm: {providers: [{name: a, base_url: "http://127.0.0.1:1/v1", api_key: "${KEY}", model: m}]}
policy: {rules: [{tool: shell, decision: approve}, {tool: "*", decision: allow}]}
store: {driver: sqlite, dsn: gatehouse.db, instance: %s}
`
	a := parseConfig(t, strings.Replace(base, "%s", "host-a", 1), map[string]string{"KEY": "sk-SECRET-one-0123456789"})
	b := parseConfig(t, strings.Replace(strings.Replace(strings.Replace(base, "%s", "host-b", 1),
		"{tool: shell, decision: approve}", "{tool: shell, decision: allow}", 1), "model: m", "model: n", 1),
		map[string]string{"KEY": "sk-SECRET-two-9876543210"})
	redact := func(s string) string {
		for _, k := range []string{"sk-SECRET-one-0123456789", "sk-SECRET-two-9876543210"} {
			s = strings.ReplaceAll(s, k, "<secret>")
		}
		return s
	}
	fa, err := configFingerprint(a, redact)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := configFingerprint(b, redact)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"policy.rules", "llm.providers", "store.dsn", "gateways.telegram", "hitl.approvers"} {
		if fa[want] == "" {
			t.Errorf("no fingerprint of %s: %v", want, fa)
		}
	}
	if _, ok := fa["store.instance"]; ok {
		t.Error("store.instance is fingerprinted; it differs by design")
	}
	if got := cluster.DifferingKeys(fa, fb); !slices.Equal(got, []string{"llm.providers", "policy.rules"}) {
		t.Errorf("differing keys %q; want llm.providers and policy.rules", got)
	}
	for k, v := range fa {
		if strings.Contains(k+v, "SECRET") {
			t.Errorf("the fingerprint holds a secret: %s=%s", k, v)
		}
	}
	// The same configuration with another secret: the same fingerprint.
	c := parseConfig(t, strings.Replace(base, "%s", "host-c", 1), map[string]string{"KEY": "sk-SECRET-two-9876543210"})
	fc, err := configFingerprint(c, redact)
	if err != nil {
		t.Fatal(err)
	}
	if got := cluster.DifferingKeys(fa, fc); len(got) != 0 {
		t.Errorf("only the secret differs, yet keys %q differ", got)
	}
}
