package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestReloadAuditsApprovers: a SIGHUP whose file adds an approver writes
// one audit row (tool config, outcome reconfigured) naming hitl.approvers
// with digests of the old and new values (never the values) and SIGHUP; a
// POST /-/reload that changes the policy writes another saying so; a
// reload that changes only a key it does not audit writes none; the chain
// still holds, and /audit answers the console's approver.
func TestReloadAuditsApprovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startFake(t, scriptedModel("run it", "echo ran"))
	addr := freeAddr(t)
	config := func(policy, approvers, apiKey string) string {
		c := strings.Replace(fakeConfig(srv.URL(), apiKey, policy, "info"), `listen: ""`, "listen: "+addr+"\n  reload: true", 1)
		return strings.Replace(c, "approvers: [console:local]", "approvers: ["+approvers+"]", 1)
	}
	const denyWrites = "    - {tool: write_file, decision: deny}\n" + shellApprove // shell still held
	writeFile(t, dir, "config.yaml", config(shellApprove, "console:local", "sk-a"))
	p := startBot(t, dir, baseEnv(dir))
	testutil.WaitFor(t, "/healthz", func() bool { code, _ := get(addr, "/healthz"); return code == http.StatusOK })
	logged := func(what string, n int) {
		t.Helper()
		testutil.WaitFor(t, what+" logged", func() bool { return strings.Count(p.stderr.String(), what) >= n })
	}

	writeFile(t, dir, "config.yaml", config(shellApprove, "console:local, console:second", "sk-a"))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	logged("config reload audited", 1)
	writeFile(t, dir, "config.yaml", config(denyWrites, "console:local, console:second", "sk-a"))
	if code, body := post(t, addr, "/-/reload"); code != http.StatusOK {
		t.Fatalf("POST /-/reload: %d %q", code, body)
	}
	logged("config reload audited", 2)
	writeFile(t, dir, "config.yaml", config(denyWrites, "console:local, console:second", "sk-b"))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	logged("config reloaded", 3)

	p.send("/audit")
	expectLine(t, p, "No audit rows for this conversation yet")

	r := runOnce(t, dir, baseEnv(dir), "", "audit", "-status", "reconfigured", "-json")
	var rows []struct {
		Tool, Args, Detail string
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != exitOK {
		t.Fatalf("bot audit: exit %d, %v\nstdout:\n%s\nstderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	if len(rows) != 2 {
		t.Fatalf("%d reconfigured rows; want 2 (the API key alone is not audited):\n%s", len(rows), r.stdout)
	}
	type change struct{ Key, Old, New string }
	var args [2]struct {
		How     string
		Changed []change
	}
	for i, row := range rows {
		if err := json.Unmarshal([]byte(row.Args), &args[i]); err != nil || row.Tool != "config" {
			t.Fatalf("row %d: tool %q, args %q: %v", i, row.Tool, row.Args, err)
		}
	}
	if a := args[0]; a.How != "SIGHUP" || len(a.Changed) != 1 || a.Changed[0].Key != "hitl.approvers" ||
		len(a.Changed[0].Old) != 32 || len(a.Changed[0].New) != 32 || a.Changed[0].Old == a.Changed[0].New {
		t.Errorf("the SIGHUP's row: %+v; want hitl.approvers changed, two different digests, how SIGHUP", a)
	}
	if a := args[1]; a.How != "POST /-/reload" || len(a.Changed) != 1 || a.Changed[0].Key != "policy.rules" {
		t.Errorf("the POST's row: %+v; want policy.rules changed, how POST /-/reload", a)
	}
	if strings.Contains(r.stdout, "console:second") || strings.Contains(r.stdout, "sk-") {
		t.Errorf("the audit rows show a configuration value:\n%s", r.stdout)
	}
	if r := runOnce(t, dir, baseEnv(dir), "", "audit", "verify"); r.code != exitOK {
		t.Errorf("bot audit verify: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	p.send("run it")
	tok := expectToken(t, p)
	p.send("/approve " + tok)
	expectLine(t, p, "MODEL: the command ran.")
	p.send("/audit " + tok)
	expectLine(t, p, "Audit of request "+tok)
	expectLine(t, p, "requested — shell")
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("bot exit %d", code)
	}
}
