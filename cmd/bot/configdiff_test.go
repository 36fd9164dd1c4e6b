package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestInstancesWithDifferentConfigsWarn: a second instance started on the
// PostgreSQL database of a running one, with other policy rules, runs
// (allowed) and logs one warning naming policy.rules, and no other key:
// not store.instance, which differs by design, nor any value or secret.
// (Each in a directory of its own, with one workspace for both.)
func TestInstancesWithDifferentConfigsWarn(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	// One workspace for both, as instances sharing a store must have: a
	// workspace of each is a difference (tools.workspace) worth a warning.
	ws := t.TempDir()
	cfgA := strings.Replace(strings.Replace(postgresConfig(t), "  level: info ", "  level: debug", 1),
		"  workspace: ./workspace", "  workspace: "+ws, 1)
	const rule = "    - {tool: write_file, decision: approve}"
	if !strings.Contains(cfgA, rule) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", rule)
	}
	cfgB := strings.Replace(cfgA, rule, "    - {tool: write_file, decision: allow}", 1)
	dirA, dirB := t.TempDir(), t.TempDir()
	writeFile(t, dirA, "config.yaml", cfgA)
	writeFile(t, dirB, "config.yaml", cfgB)
	a := startBot(t, dirA, baseEnv(dirA, "GATEHOUSE_DSN="+dsn))
	testutil.WaitFor(t, "A's fingerprint recorded", func() bool {
		return strings.Contains(a.stderr.String(), "configuration fingerprint recorded")
	})
	b := startBot(t, dirB, baseEnv(dirB, "GATEHOUSE_DSN="+dsn))
	var warning map[string]any
	testutil.WaitFor(t, "B's warning", func() bool {
		for _, line := range strings.Split(b.stderr.String(), "\n") {
			if strings.Contains(line, "shares this store with another configuration") {
				return json.Unmarshal([]byte(line), &warning) == nil
			}
		}
		return false
	})
	keys, _ := warning["keys"].([]any)
	if len(keys) != 1 || keys[0] != "policy.rules" || warning["level"] != "warn" {
		t.Errorf("B's warning %v; want a warning naming policy.rules alone", warning)
	}
	b.send("what time is it")
	expectLine(t, b, "The time is")
	if n := strings.Count(b.stderr.String(), "shares this store with another configuration"); n != 1 {
		t.Errorf("B warned %d times; want once", n)
	}
	if strings.Contains(a.stderr.String()+b.stderr.String(), "decision: allow") ||
		slices.ContainsFunc(strings.Split(b.stderr.String(), "\n"), func(l string) bool { return strings.Contains(l, passwordFromDSN(dsn)) }) {
		t.Error("a configuration value or the database password is in the log")
	}
}

// passwordFromDSN is the password of a postgres:// DSN, or a string no
// log holds when it has none.
func passwordFromDSN(dsn string) string {
	_, rest, ok := strings.Cut(dsn, "://")
	userinfo, _, ok2 := strings.Cut(rest, "@")
	_, pw, ok3 := strings.Cut(userinfo, ":")
	if !ok || !ok2 || !ok3 || pw == "" {
		return "\x00no password\x00"
	}
	return pw
}
