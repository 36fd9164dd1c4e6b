package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCtrlCWhileApprovedActionRuns: SIGINT while an approved shell command
// runs past the shutdown grace: the console is told it was stopped by
// shutdown while it ran and may have done part of its work, as /cancel
// says it, and `bot audit` records it interrupted. It said "could not be
// run: core: tools tool: tools: act shell: context canceled", audited
// failed.
func TestCtrlCWhileApprovedActionRuns(t *testing.T) {
	t.Parallel()
	const trigger = "please start the endless job"
	dir, ws := newFakeBotDir(t, trigger, "echo start >> runs.txt; echo $$ > sh.pid; sleep 60")
	env := baseEnv(dir)
	t.Cleanup(func() { killShellGroup(t, filepath.Join(ws, "sh.pid")) })

	p := startBot(t, dir, env)
	p.send(trigger)
	token := expectToken(t, p)
	expectLine(t, p, "MODEL: the command awaits approval.")
	p.send("/approve " + token)
	waitFile(t, filepath.Join(ws, "runs.txt"), func(s string) bool { return s == "start\n" })
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("SIGINT: %v", err)
	}
	line := expectLine(t, p, "Approved by console:local")
	for _, want := range []string{token, "stopped by shutdown while it ran; it may have done part of its work"} {
		if !strings.Contains(line, want) {
			t.Errorf("outcome line %q does not say %q", line, want)
		}
	}
	if strings.Contains(line, "context canceled") || strings.Contains(line, "could not be run") {
		t.Errorf("outcome line %q reports the shutdown as an error", line)
	}
	expectStoppedOutput(t, p)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d after SIGINT; want 0", code)
	}

	r := runOnce(t, dir, env, "", "audit", "--since", "1h", "--json", "--tool", "shell")
	var entries []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil || r.code != 0 {
		t.Fatalf("bot audit: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var outcomes []string
	for _, e := range entries {
		outcomes = append(outcomes, e["outcome"].(string))
	}
	if got := strings.Join(outcomes, ","); !strings.Contains(got, "interrupted") || strings.Contains(got, "failed") {
		t.Errorf("audit outcomes of the shell call = %s; want it interrupted, not failed", got)
	}
}

// TestCancelledRunSaysStoppedInItsOutput: /cancel while an approved shell
// command runs: the outcome says it was cancelled, and its output block
// ends saying, in words, that the command was stopped. It ended with Go's
// "error: shell: context canceled".
func TestCancelledRunSaysStoppedInItsOutput(t *testing.T) {
	t.Parallel()
	const trigger = "please start the endless job"
	dir, ws := newFakeBotDir(t, trigger, "echo start >> runs.txt; echo $$ > sh.pid; sleep 60")
	t.Cleanup(func() { killShellGroup(t, filepath.Join(ws, "sh.pid")) })

	p := startBot(t, dir, baseEnv(dir))
	p.send(trigger)
	token := expectToken(t, p)
	expectLine(t, p, "MODEL: the command awaits approval.")
	p.send("/approve " + token)
	waitFile(t, filepath.Join(ws, "runs.txt"), func(s string) bool { return s == "start\n" })
	p.send("/cancel")
	line := expectLine(t, p, "Approved by console:local")
	if !strings.Contains(line, "was cancelled (/cancel) while it ran") {
		t.Errorf("outcome line %q does not say it was cancelled", line)
	}
	expectStoppedOutput(t, p)
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d after end of input; want 0", code)
	}
}

// expectStoppedOutput reads the outcome's output block up to its error
// line, which must say the command was stopped, in words.
func expectStoppedOutput(t *testing.T, p *botProc) {
	t.Helper()
	line := expectLine(t, p, "error: ")
	if !strings.Contains(line, "error: shell: stopped before it finished") || strings.Contains(line, "context canceled") {
		t.Errorf("the output block ends %q; want it to say the command was stopped, in words", line)
	}
}
