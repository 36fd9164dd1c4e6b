package cluster

import (
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

// TestDifferingKeysBounded: keys only the other instance has are named
// too, shown on one line, and a warning names at most maxDiffKeys.
func TestDifferingKeysBounded(t *testing.T) {
	theirs := map[string]string{"odd\nkey": "1"}
	mine := map[string]string{}
	for i := range 50 {
		mine[strings.Repeat("k", i+1)] = "x"
	}
	got := DifferingKeys(mine, theirs)
	if len(got) != maxDiffKeys+1 || got[maxDiffKeys] != "…" {
		t.Fatalf("%d keys, last %q; want %d and an ellipsis", len(got), got[len(got)-1], maxDiffKeys)
	}
	for _, k := range DifferingKeys(map[string]string{}, theirs) {
		if strings.Contains(k, "\n") {
			t.Errorf("a key from the store shown with a line break: %q", k)
		}
	}
}
