package app

import (
	"slices"
	"strings"
	"testing"
)

// TestFingerprintPath: a key as a reload names it falls in the key path
// of the fingerprint that holds it.
func TestFingerprintPath(t *testing.T) {
	for key, want := range map[string]string{
		"gateways.telegram.token":      "gateways.telegram",
		"llm.providers[0].model":       "llm.providers",
		"llm.providers":                "llm.providers",
		"schedules[1].prompt":          "schedules",
		"schedules":                    "schedules",
		"store.dsn":                    "store.dsn",
		"tools.workspace":              "tools.workspace",
		"mcp.servers[0].env.TOKEN":     "mcp.servers",
		"gateways.slack.allow_bots[0]": "gateways.slack",
	} {
		if got := fingerprintPath(key); got != want {
			t.Errorf("fingerprintPath(%q) = %q; want %q", key, got, want)
		}
	}
}

// TestReloadedFingerprintIsWhatIsInForce: after a reload that changes
// policy.rules (applied) and llm.providers[0].model (needs a restart),
// the fingerprint the other instances compare with has the new rules and
// the running providers: the instance still answers with the old model.
func TestReloadedFingerprintIsWhatIsInForce(t *testing.T) {
	const base = `llm: {providers: [{name: a, base_url: "http://127.0.0.1:1/v1", model: m}]}
policy: {rules: [{tool: shell, decision: approve}]}
store: {driver: sqlite, dsn: gatehouse.db}
`
	running := parseConfig(t, base, nil)
	next := parseConfig(t, strings.Replace(strings.Replace(base, "decision: approve", "decision: deny", 1), "model: m", "model: n", 1), nil)
	id := func(s string) string { return s }
	fr, err := configFingerprint(running, id)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := configFingerprint(next, id)
	if err != nil {
		t.Fatal(err)
	}
	restart := restartKeys(running, next)
	if !slices.Equal(restart, []string{"llm.providers[0].model"}) {
		t.Fatalf("restartKeys = %v; this test expects the model alone", restart)
	}
	live := liveFingerprint(fr, fn, restart)
	if got := differingKeys(fr, live); !slices.Equal(got, []string{"policy.rules"}) {
		t.Errorf("live differs from the running configuration in %v; want policy.rules alone", got)
	}
	if got := differingKeys(fn, live); !slices.Equal(got, []string{"llm.providers"}) {
		t.Errorf("live differs from the reloaded file in %v; want llm.providers alone", got)
	}
}
