package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

// TestStatusAndDoctorNameTheKeysThatDiffer: two instances on one
// PostgreSQL database, a with shell denied, b with it held for approval.
// /status on each names policy.rules as the key in which the other
// differs, and bot doctor (with b's file) warns that a and b differ in
// it and says a differs from the file; a call held on b and approved on
// a is refused by a's policy, not run. Once a reloads b's rules (SIGHUP),
// /status on b says the configurations are the same. Before, only the
// start-up log named the keys, and a ran b's held call.
func TestStatusAndDoctorNameTheKeysThatDiffer(t *testing.T) {
	t.Parallel()
	dir, envA, envB := twoInstances(t)
	const held, denied = "    - {tool: shell, decision: approve}", "    - {tool: shell, decision: deny}"
	cfg := strings.Replace(clusterConfig(t), "  level: info ", "  level: debug", 1)
	if !strings.Contains(cfg, held) || !strings.Contains(cfg, "  level: debug") {
		t.Fatalf("the shipped config.yaml no longer has %q or log.level info; update this test", held)
	}
	writeFile(t, dir, "config.yaml", cfg)
	writeFile(t, dir, "deny.yaml", strings.Replace(cfg, held, denied, 1))
	recorded := func(p *botProc, n int) {
		t.Helper()
		testutil.WaitFor(t, "the configuration fingerprint recorded", func() bool {
			return strings.Count(p.stderr.String(), "configuration fingerprint recorded") >= n
		})
	}
	a := startBot(t, dir, envA, "-config", "deny.yaml")
	recorded(a, 1)
	b := startBot(t, dir, envB)
	recorded(b, 1)

	a.send("/status")
	expectLine(t, a, "Configuration differs from instance b: policy.rules")
	b.send("/status")
	expectLine(t, b, "Configuration differs from instance a: policy.rules")
	r := runOnce(t, dir, envB, "", "doctor")
	for _, want := range []string{
		"warning: configurations of instances a and b differ in policy.rules",
		"configuration of instance a differs from this file in policy.rules",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("bot doctor does not say %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "instance b differs") || strings.Contains(r.stdout, "decision: deny") {
		t.Errorf("bot doctor says b differs from its own file, or shows a value:\n%s", r.stdout)
	}

	runs := filepath.Join(dir, "workspace", "runs.txt")
	b.send("run `echo run >> runs.txt`")
	token := expectToken(t, b)
	a.send("/approve " + token)
	refused := expectLine(t, a, "Refused: shell")
	for _, want := range []string{token, "the policy of instance a denies it", "#1 {tool: shell, decision: deny}"} {
		if !strings.Contains(refused, want) {
			t.Errorf("refusal %q does not say %q", refused, want)
		}
	}

	writeFile(t, dir, "deny.yaml", cfg)
	if err := a.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	recorded(a, 2)
	b.send("/status")
	expectLine(t, b, "Configuration: the same as the other instances alive (1)")
	for _, p := range []*botProc{a, b} {
		p.closeInput()
		if code := p.wait(); code != 0 {
			t.Errorf("exit %d", code)
		}
	}
	if got := readFile(t, runs); got != "" {
		t.Errorf("runs.txt = %q: a ran a call its policy denies", got)
	}
}
