package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// offlineConfig is the shipped config.yaml with the health server off, so
// parallel tests (and a bot running on this machine) don't share a port.
func offlineConfig(t *testing.T) string {
	t.Helper()
	cfg := defaultConfig(t)
	const listen = "listen: 127.0.0.1:9090"
	if !strings.Contains(cfg, listen) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", listen)
	}
	return strings.Replace(cfg, listen, `listen: ""`, 1)
}

// TestConsoleDemoWalkthrough drives the issue 2/3 walkthrough through a
// piped console with the offline demo model: read-only tools run without
// asking; shell is held; /approve runs it once and the model follows up;
// /deny keeps it from running and the model says so; end of input exits 0.
func TestConsoleDemoWalkthrough(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	ws := filepath.Join(dir, "workspace")
	writeFile(t, ws, "notes.txt", "remember the milk 42\n")
	p := startBot(t, dir, baseEnv(dir))

	p.send("what time is it")
	expectLine(t, p, "The time is")
	if strings.Contains(p.stdout(), "Approval needed") {
		t.Fatalf("current_time asked for approval:\n%s", p.stdout())
	}

	p.send("read notes.txt")
	expectLine(t, p, "remember the milk 42")
	if strings.Contains(p.stdout(), "Approval needed") {
		t.Fatalf("read_file asked for approval:\n%s", p.stdout())
	}

	p.send("run `echo hi > ran.txt`")
	expectLine(t, p, "Approval needed: shell")
	token := expectToken(t, p)
	expectLine(t, p, "needs a human's approval") // the demo model tells the user it waits
	if got := readFile(t, filepath.Join(ws, "ran.txt")); got != "" {
		t.Fatalf("the held command ran before approval: ran.txt = %q", got)
	}

	p.send("/approve " + token)
	ran := expectLine(t, p, "Approved by console:local")
	if !strings.Contains(ran, token) || !strings.Contains(ran, "ran") {
		t.Errorf("outcome notice %q does not name the request %s and say it ran", ran, token)
	}
	expectLine(t, p, "The request was approved and the action ran") // the model's follow-up
	if got := readFile(t, filepath.Join(ws, "ran.txt")); got != "hi\n" {
		t.Fatalf("ran.txt = %q after approval; want %q", got, "hi\n")
	}

	p.send("run `echo no > denied.txt`")
	token2 := expectToken(t, p)
	if token2 == token {
		t.Fatalf("second request reused token %s", token)
	}
	p.send("/deny " + token2 + " too risky")
	denied := expectLine(t, p, "Denied by console:local")
	if !strings.Contains(denied, "too risky") {
		t.Errorf("deny notice %q does not carry the reason", denied)
	}
	expectLine(t, p, "denied the request, so it did not run") // the model's follow-up

	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d after end of input; want 0", code)
	}
	if got := readFile(t, filepath.Join(ws, "denied.txt")); got != "" {
		t.Errorf("the denied command ran: denied.txt = %q", got)
	}
	if strings.Contains(p.stdout(), "[gatehouse]") {
		t.Errorf("the core's notes to the model leaked into the chat:\n%s", p.stdout())
	}
}

// TestPipedInputEndsRightAfterApprove: input that ends right after an
// /approve still gets the approved action's outcome and the model's
// follow-up before the bot exits, although the action runs in the broker
// after the /approve turn has ended.
func TestPipedInputEndsRightAfterApprove(t *testing.T) {
	t.Parallel()
	const trigger = "please run the slow job"
	srv := startFake(t, scriptedModel(trigger, "sleep 0.3; echo done > ran.txt"))
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "sk-test", shellApprove, "info"))
	p := startBot(t, dir, baseEnv(dir))
	p.send(trigger)
	token := expectToken(t, p)
	expectLine(t, p, "MODEL: the command awaits approval.")
	p.send("/approve " + token)
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	if !strings.Contains(p.stdout(), "MODEL: the command ran.") {
		t.Fatalf("the bot exited before the model's follow-up to the approved run:\n%s", p.stdout())
	}
	if got := readFile(t, filepath.Join(dir, "workspace", "ran.txt")); got != "done\n" {
		t.Errorf("ran.txt = %q; want the approved command to have run once", got)
	}
}
