package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStandingAllowBindsTheScript is issue 9 item 4 through the binary with
// the shipped config: "sh run.sh" approved always runs again without a
// question only while run.sh is unchanged; a rewritten run.sh is held, and
// the request names it. write_file is held by the shipped policy. The
// approval's acknowledgement is printed before the run's outcome (item 12).
func TestStandingAllowBindsTheScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	ws := filepath.Join(dir, "workspace")
	writeFile(t, ws, "run.sh", "echo ok >> out.txt\n")
	out := filepath.Join(ws, "out.txt")
	p := startBot(t, dir, baseEnv(dir))

	p.send("run `sh run.sh`")
	token := expectToken(t, p)
	p.send("/approve " + token + " always")
	// In this order: the acknowledgement, its standing allow line, then
	// the outcome (expectLine reads forward).
	ack := expectLine(t, p, "Approved: running")
	expectLine(t, p, "Standing allow #1 added")
	expectLine(t, p, "Approved by console:local")
	if !strings.Contains(ack, token) {
		t.Errorf("acknowledgement %q does not name the request", ack)
	}
	waitFile(t, out, func(s string) bool { return s == "ok\n" })
	if n := strings.Count(p.stdout(), "Standing allow #1 added"); n != 1 {
		t.Errorf("the console heard \"Standing allow #1 added\" %d times, want once:\n%s", n, p.stdout())
	}

	// Unchanged: it runs without a request.
	requests := strings.Count(p.stdout(), "Approval needed")
	p.send("run `sh run.sh`")
	waitFile(t, out, func(s string) bool { return s == "ok\nok\n" })

	// Rewritten behind the allow's back: held again, naming the file.
	writeFile(t, ws, "run.sh", "echo pwned >> evil.txt\n")
	p.send("run `sh run.sh`")
	expectLine(t, p, "run.sh` changed since the standing allow #1 was added")
	expectToken(t, p)
	if got := strings.Count(p.stdout(), "Approval needed"); got != requests+1 {
		t.Errorf("%d approval requests after the unchanged and the changed run, want %d:\n%s", got, requests+1, p.stdout())
	}

	// The shipped policy holds write_file.
	p.send("write hello to notes.txt")
	expectLine(t, p, "Approval needed: write_file")

	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	if got := readFile(t, filepath.Join(ws, "evil.txt")); got != "" {
		t.Errorf("the rewritten run.sh ran without approval: evil.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(ws, "notes.txt")); got != "" {
		t.Errorf("write_file ran without approval: notes.txt = %q", got)
	}
}
