package main

import (
	"strings"
	"testing"
)

// TestConfigErrorsHelpAFirstTimer: the errors a first configuration runs
// into say how to fix it, and still name the key: an unknown key
// suggests the nearest known one (only when it is close), a duration
// without a unit says it needs one, and a missing file names -config.
func TestConfigErrorsHelpAFirstTimer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, want, not string
	}{
		{"near key", "llm:\n  max_step: 5\n", "llm.max_step: unknown key; did you mean max_steps?", ""},
		{"near gateway", "gateways:\n  telegarm: {token: x}\n", "gateways.telegarm: unknown key; did you mean telegram?", ""},
		{"far key", "llm:\n  frobnicate: 5\n", "llm.frobnicate: unknown key", "did you mean"},
		{"duration without unit", "hitl:\n  ttl: 15\n", `hitl.ttl: bad duration "15": a duration needs a unit, e.g. 15m`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "config.yaml", tc.yaml+"store: {dsn: gatehouse.db}\nhttp: {listen: \"\"}\n")
			r := runOnce(t, dir, baseEnv(dir), "", "doctor")
			if r.code != exitConfig || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitConfig, tc.want)
			}
			if tc.not != "" && strings.Contains(r.stderr, tc.not) {
				t.Errorf("stderr %q says %q: the suggestion is too far to help", r.stderr, tc.not)
			}
		})
	}
	t.Run("no file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		for _, sub := range [][]string{{}, {"doctor"}} {
			r := runOnce(t, dir, baseEnv(dir), "", sub...)
			if want := "config.yaml: no such file; pass -config PATH"; r.code != exitConfig || !strings.Contains(r.stderr, want) {
				t.Errorf("bot %v without config.yaml: exit %d, stderr %q; want %d and %q", sub, r.code, r.stderr, exitConfig, want)
			}
		}
	})
}
