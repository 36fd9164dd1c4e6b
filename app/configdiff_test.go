package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/cluster"
)

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
	live := cluster.LiveFingerprint(fr, fn, restart)
	if got := cluster.DifferingKeys(fr, live); !slices.Equal(got, []string{"policy.rules"}) {
		t.Errorf("live differs from the running configuration in %v; want policy.rules alone", got)
	}
	if got := cluster.DifferingKeys(fn, live); !slices.Equal(got, []string{"llm.providers"}) {
		t.Errorf("live differs from the reloaded file in %v; want llm.providers alone", got)
	}
}
