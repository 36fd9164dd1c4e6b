package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// newFakeBotDir prepares a bot directory whose model proposes command
// when the user types trigger.
func newFakeBotDir(t *testing.T, trigger, command string) (dir, ws string) {
	t.Helper()
	srv := startFake(t, scriptedModel(trigger, command))
	dir = t.TempDir()
	ws = filepath.Join(dir, "workspace")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "test-key-not-secret-here", shellApprove, "info"))
	return dir, ws
}

// TestRestartPendingApproval: an approval pending when the process is
// SIGKILLed survives; approved after the restart, its action runs exactly
// once, even when approved twice, and a further restart does not replay it.
// `bot audit` then shows the run.
func TestRestartPendingApproval(t *testing.T) {
	t.Parallel()
	const trigger = "please append a run"
	dir, ws := newFakeBotDir(t, trigger, "echo run >> runs.txt")
	runs := filepath.Join(ws, "runs.txt")
	env := baseEnv(dir)

	p1 := startBot(t, dir, env)
	p1.send(trigger)
	token := expectToken(t, p1)
	expectLine(t, p1, "MODEL: the command awaits approval.")
	p1.kill9()
	if got := readFile(t, runs); got != "" {
		t.Fatalf("the held command ran before approval: runs.txt = %q", got)
	}

	p2 := startBot(t, dir, env)
	p2.send("/approve " + strings.ToLower(token[:4]) + "-" + strings.ToLower(token[4:]))
	ran := expectLine(t, p2, "Approved by console:local")
	if !strings.Contains(ran, token) || !strings.Contains(ran, "ran") {
		t.Errorf("outcome notice %q does not name request %s and say it ran", ran, token)
	}
	expectLine(t, p2, "MODEL: the command ran.")
	p2.send("/approve " + token)
	expectLine(t, p2, "already")
	p2.closeInput()
	if code := p2.wait(); code != 0 {
		t.Fatalf("exit %d after end of input; want 0", code)
	}
	if got := readFile(t, runs); got != "run\n" {
		t.Fatalf("runs.txt = %q; want the command run exactly once", got)
	}

	p3 := startBot(t, dir, env)
	p3.send("hello")
	expectLine(t, p3, "MODEL: ok.")
	p3.closeInput()
	if code := p3.wait(); code != 0 {
		t.Fatalf("third run: exit %d; want 0", code)
	}
	if got := readFile(t, runs); got != "run\n" {
		t.Fatalf("after another restart runs.txt = %q; want the command run exactly once", got)
	}
	if strings.Contains(p3.stdout(), "Approved by") || strings.Contains(p3.stdout(), "Interrupted") {
		t.Errorf("a restart re-announced a finished approval:\n%s", p3.stdout())
	}

	t.Run("audit json", func(t *testing.T) { checkAuditJSON(t, dir, env) })
	t.Run("audit table", func(t *testing.T) { checkAuditTable(t, dir, env) })
}

// checkAuditJSON: `bot audit --since 1h --json` prints a JSON array holding
// the approved, executed shell call.
func checkAuditJSON(t *testing.T, dir string, env []string) {
	r := runOnce(t, dir, env, "", "audit", "--since", "1h", "--json")
	if r.code != 0 {
		t.Fatalf("bot audit: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatalf("bot audit --json is not a JSON array: %v\n%s", err, r.stdout)
	}
	executed := 0
	for _, e := range entries {
		if e["tool"] == "shell" && e["outcome"] == "executed" {
			executed++
			if e["requested_by"] != "console:local" || e["approved_by"] != "console:local" {
				t.Errorf("executed entry %v: want requested_by and approved_by console:local", e)
			}
			if !strings.Contains(e["args"].(string), "runs.txt") {
				t.Errorf("executed entry %v does not show the command", e)
			}
		}
	}
	if executed != 1 {
		t.Errorf("audit has %d executed shell entries; want 1:\n%s", executed, r.stdout)
	}
}

// checkAuditTable: the table form has a header and the executed call.
func checkAuditTable(t *testing.T, dir string, env []string) {
	r := runOnce(t, dir, env, "", "audit", "--since", "1h")
	if r.code != 0 {
		t.Fatalf("bot audit: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if !strings.Contains(lines[0], "TOOL") || !strings.Contains(lines[0], "OUTCOME") {
		t.Errorf("bot audit has no header line:\n%s", r.stdout)
	}
	found := false
	for _, l := range lines[1:] {
		found = found || strings.Contains(l, "shell") && strings.Contains(l, "executed")
	}
	if !found {
		t.Errorf("bot audit table has no executed shell row:\n%s", r.stdout)
	}
}

// TestRestartInterruptedRun: a process killed while an approved command
// runs leaves it executing; the next start reports it interrupted in the
// conversation, tells the model, and never runs it again.
func TestRestartInterruptedRun(t *testing.T) {
	t.Parallel()
	const trigger = "please start the slow job"
	dir, ws := newFakeBotDir(t, trigger, "echo start >> runs.txt; echo $$ > sh.pid; sleep 30")
	runs := filepath.Join(ws, "runs.txt")
	env := baseEnv(dir)
	t.Cleanup(func() { killShellGroup(t, filepath.Join(ws, "sh.pid")) })

	p1 := startBot(t, dir, env)
	p1.send(trigger)
	token := expectToken(t, p1)
	expectLine(t, p1, "MODEL: the command awaits approval.")
	p1.send("/approve " + token)
	waitFile(t, runs, func(s string) bool { return s == "start\n" })
	waitFile(t, filepath.Join(ws, "sh.pid"), func(s string) bool { return strings.HasSuffix(s, "\n") })
	p1.kill9()

	p2 := startBot(t, dir, env)
	cut := expectLine(t, p2, "Interrupted:")
	if !strings.Contains(cut, token) {
		t.Errorf("interrupted notice %q does not name request %s", cut, token)
	}
	expectLine(t, p2, "MODEL: the command was interrupted by a restart.")
	p2.closeInput()
	if code := p2.wait(); code != 0 {
		t.Fatalf("exit %d after end of input; want 0", code)
	}
	if got := readFile(t, runs); got != "start\n" {
		t.Fatalf("runs.txt = %q; the interrupted command must not run again", got)
	}

	r := runOnce(t, dir, env, "", "audit", "--since", "1h", "--json", "--status", "interrupted")
	var entries []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil || r.code != 0 {
		t.Fatalf("bot audit: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(entries) != 1 || entries[0]["tool"] != "shell" {
		t.Errorf("audit of interrupted runs = %v; want the one shell call", entries)
	}
}

// killShellGroup kills the process group of the shell whose pid the test
// command wrote, if it still runs this test's command (the shell tool puts
// each command in its own group, so it outlives a SIGKILLed bot).
func killShellGroup(t *testing.T, pidFile string) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !strings.Contains(string(cmdline), "sh.pid") {
		return // gone, or the pid was reused
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Logf("kill leftover shell group %d: %v", pid, err)
	}
}
