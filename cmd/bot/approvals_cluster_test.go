package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// clusterConfig is the offline configuration on a shared PostgreSQL store
// with a short store.lease_ttl and the instance's name from
// ${GATEHOUSE_INSTANCE}: several bots run it in one directory (one
// workspace, which a real deployment mounts on every instance).
func clusterConfig(t *testing.T) string {
	t.Helper()
	cfg := postgresConfig(t)
	for old, repl := range map[string]string{
		"  lease_ttl: 15s ": "  lease_ttl: 2s ",
		`  instance: "" `:   "  instance: ${GATEHOUSE_INSTANCE} ",
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("the shipped config.yaml no longer has %q; update this test", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	return cfg
}

// auditOutcomes counts `bot audit --json`'s shell entries by outcome.
// twoInstances is a directory with clusterConfig and the environments
// of two instances, a and b, on one fresh PostgreSQL database.
func twoInstances(t *testing.T) (dir string, envA, envB []string) {
	t.Helper()
	dsn := pgtest.DSN(t)
	dir = t.TempDir()
	writeFile(t, dir, "config.yaml", clusterConfig(t))
	return dir, baseEnv(dir, "GATEHOUSE_DSN="+dsn, "GATEHOUSE_INSTANCE=a"),
		baseEnv(dir, "GATEHOUSE_DSN="+dsn, "GATEHOUSE_INSTANCE=b")
}

func auditOutcomes(t *testing.T, dir string, env []string) map[string]int {
	t.Helper()
	r := runOnce(t, dir, env, "", "audit", "--since", "1h", "--json")
	if r.code != 0 {
		t.Fatalf("bot audit: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatalf("bot audit --json is not a JSON array: %v\n%s", err, r.stdout)
	}
	out := make(map[string]int)
	for _, e := range entries {
		if e["tool"] == "shell" {
			out[e["outcome"].(string)]++
		}
	}
	return out
}

// TestApprovalsClusterApproveOnAnotherInstance: two bots on one database;
// a shell call is held on A, A is SIGKILLed while the request is pending,
// and /approve reaches B: the call runs once (one line in the file it
// appends to), on B, and is audited approved and executed once.
func TestApprovalsClusterApproveOnAnotherInstance(t *testing.T) {
	t.Parallel()
	dir, envA, envB := twoInstances(t)
	runs := filepath.Join(dir, "workspace", "runs.txt")

	a := startBot(t, dir, envA)
	b := startBot(t, dir, envB)
	a.send("run `echo run >> runs.txt`")
	expectLine(t, a, "Approval needed: shell")
	token := expectToken(t, a)
	a.kill9()
	if got := readFile(t, runs); got != "" {
		t.Fatalf("the held command ran before approval: runs.txt = %q", got)
	}

	b.send("/approve " + token)
	ran := expectLine(t, b, "Approved by console:local")
	if !strings.Contains(ran, token) || !strings.Contains(ran, "ran") {
		t.Errorf("outcome notice %q does not name request %s and say it ran", ran, token)
	}
	b.send("/approve " + token)
	expectLine(t, b, "already")
	b.closeInput()
	if code := b.wait(); code != 0 {
		t.Fatalf("B: exit %d after end of input; want 0", code)
	}
	if got := readFile(t, runs); got != "run\n" {
		t.Fatalf("runs.txt = %q; want the command run exactly once", got)
	}
	got := auditOutcomes(t, dir, envB)
	if got["approved"] != 1 || got["executed"] != 1 || got["interrupted"] != 0 {
		t.Errorf("audit of the shell call: %v; want approved 1, executed 1, interrupted 0", got)
	}
}

// TestApprovalsClusterRunnerDies: A runs an approved shell call; B, started
// while it runs, leaves it running (restart recovery marks only a dead
// instance's runs); A is SIGKILLed mid-run, and after store.lease_ttl B
// marks the call interrupted, audited once, and never runs it again.
func TestApprovalsClusterRunnerDies(t *testing.T) {
	t.Parallel()
	dir, envA, envB := twoInstances(t)
	started := filepath.Join(dir, "workspace", "started.txt")

	t.Cleanup(func() { killShellGroup(t, filepath.Join(dir, "workspace", "sh.pid")) })
	a := startBot(t, dir, envA)
	a.send("run `echo start >> started.txt; echo $$ > sh.pid; sleep 60`")
	expectLine(t, a, "Approval needed: shell")
	token := expectToken(t, a)
	a.send("/approve " + token)
	expectLine(t, a, "Approved: running")
	testutil.WaitFor(t, "the approved call to start", func() bool { return readFile(t, started) == "start\n" })

	b := startBot(t, dir, envB)
	b.send("what time is it")
	expectLine(t, b, "The time is") // B is up: its restart recovery is done
	if got := auditOutcomes(t, dir, envB); got["interrupted"] != 0 {
		t.Fatalf("B's start marked A's live run interrupted: audit %v", got)
	}

	a.kill9()
	expectLine(t, b, "Interrupted: ")
	b.closeInput()
	if code := b.wait(); code != 0 {
		t.Fatalf("B: exit %d after end of input; want 0", code)
	}
	if got := readFile(t, started); got != "start\n" {
		t.Errorf("started.txt = %q; want the call started once, never again", got)
	}
	got := auditOutcomes(t, dir, envB)
	if got["approved"] != 1 || got["interrupted"] != 1 || got["executed"] != 0 {
		t.Errorf("audit of the shell call: %v; want approved 1, interrupted 1, executed 0", got)
	}
}

// TestApprovalsClusterLongRunOutlivesLease: an approved call on A that
// runs longer than store.lease_ttl, with B sweeping all along, ends
// executed: A's heartbeat keeps it its own (it heartbeats well within the
// lease), so B never takes it for a dead instance's.
func TestApprovalsClusterLongRunOutlivesLease(t *testing.T) {
	t.Parallel()
	dir, envA, envB := twoInstances(t)
	runs := filepath.Join(dir, "workspace", "runs.txt")

	a := startBot(t, dir, envA)
	b := startBot(t, dir, envB)
	b.send("what time is it")
	expectLine(t, b, "The time is") // B is up and sweeping
	// Three leases long (lease_ttl 2s).
	a.send("run `sleep 6; echo run >> runs.txt`")
	expectLine(t, a, "Approval needed: shell")
	token := expectToken(t, a)
	a.send("/approve " + token)
	ran := expectLine(t, a, "Approved by console:local")
	if !strings.Contains(ran, token) || !strings.Contains(ran, "ran") {
		t.Errorf("outcome notice %q does not say request %s ran", ran, token)
	}
	for _, p := range []*botProc{a, b} {
		p.closeInput()
		if code := p.wait(); code != 0 {
			t.Fatalf("exit %d after end of input; want 0", code)
		}
	}
	if strings.Contains(b.stdout(), "Interrupted") {
		t.Errorf("B announced A's live run interrupted:\n%s", b.stdout())
	}
	if got := readFile(t, runs); got != "run\n" {
		t.Errorf("runs.txt = %q; want the command run once", got)
	}
	got := auditOutcomes(t, dir, envB)
	if got["executed"] != 1 || got["interrupted"] != 0 {
		t.Errorf("audit of the shell call: %v; want executed 1, interrupted 0", got)
	}
}

// TestApprovalsClusterCleanStopFinishesItsRun: A is stopped (SIGINT) while
// an approved call runs within the shutdown grace: A's run ends executed
// and is announced, and B, sweeping meanwhile, does not take it for a dead
// instance's (A's heartbeat goes on until its runs are recorded; it used
// to stop, and A's row be removed, at once).
func TestApprovalsClusterCleanStopFinishesItsRun(t *testing.T) {
	t.Parallel()
	dir, envA, envB := twoInstances(t)
	ws := filepath.Join(dir, "workspace")

	a := startBot(t, dir, envA)
	b := startBot(t, dir, envB)
	b.send("what time is it")
	expectLine(t, b, "The time is") // B is up and sweeping
	// Two leases long (lease_ttl 2s), well within the 10 s grace.
	a.send("run `echo start >> started.txt; sleep 4; echo run >> runs.txt`")
	expectLine(t, a, "Approval needed: shell")
	token := expectToken(t, a)
	a.send("/approve " + token)
	testutil.WaitFor(t, "the approved call to start", func() bool { return readFile(t, filepath.Join(ws, "started.txt")) == "start\n" })
	if err := a.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("SIGINT: %v", err)
	}
	ran := expectLine(t, a, "Approved by console:local")
	if !strings.Contains(ran, token) || !strings.Contains(ran, "ran") {
		t.Errorf("outcome notice %q does not say request %s ran", ran, token)
	}
	if code := a.wait(); code != 0 {
		t.Fatalf("A: exit %d after SIGINT; want 0", code)
	}
	b.closeInput()
	if code := b.wait(); code != 0 {
		t.Fatalf("B: exit %d after end of input; want 0", code)
	}
	if strings.Contains(b.stdout(), "Interrupted") {
		t.Errorf("B announced A's run interrupted:\n%s", b.stdout())
	}
	if got := readFile(t, filepath.Join(ws, "runs.txt")); got != "run\n" {
		t.Errorf("runs.txt = %q; want the command run once", got)
	}
	got := auditOutcomes(t, dir, envB)
	if got["executed"] != 1 || got["interrupted"] != 0 {
		t.Errorf("audit of the shell call: %v; want executed 1, interrupted 0", got)
	}
}

// TestApprovalsClusterRequestMessageUpdatedByItsInstance: A polls Telegram
// (it holds the lease) and sends the request, with buttons, to the
// Telegram user who asked; /approve reaches B on its console. The call
// runs once, on B, and A — told through PostgreSQL, since only A knows
// the request message — edits the message in place: its buttons are
// gone and it shows the outcome.
func TestApprovalsClusterRequestMessageUpdatedByItsInstance(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	cfg := clusterConfig(t)
	for old, repl := range map[string]string{
		"    api_url: https://api.telegram.org\n    allow: []": "    api_url: " + tg.URL() + "\n    allow: [\"42\"]",
		"  approvers: [console:local] ":                        "  approvers: [console:local, telegram:42] ",
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("the shipped config.yaml no longer has %q; update this test", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	writeFile(t, dir, "config.yaml", cfg)
	env := func(name string) []string {
		return baseEnv(dir, "GATEHOUSE_DSN="+dsn, "GATEHOUSE_INSTANCE="+name, "TELEGRAM_BOT_TOKEN="+tg.Token())
	}
	runs := filepath.Join(dir, "workspace", "runs.txt")

	a := startBot(t, dir, env("a"))
	testutil.WaitFor(t, "A to poll Telegram", func() bool { return len(tg.Polls()) > 0 })
	b := startBot(t, dir, env("b"))
	b.send("what time is it")
	expectLine(t, b, "The time is") // B is up; A holds the polling lease

	user := faketg.User{ID: 42, FirstName: "Ann"}
	tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: 42, Type: "private"}, Text: "run `echo run >> runs.txt`"})
	var request faketg.Sent
	testutil.WaitFor(t, "the request with buttons", func() bool {
		for _, s := range tg.Sent() {
			if s.Method == "sendMessage" && s.Markup != nil && len(s.Markup.Buttons()) > 0 {
				request = s
				return true
			}
		}
		return false
	})
	m := tokenRe.FindStringSubmatch(request.Plain)
	if m == nil {
		t.Fatalf("the request %q has no /approve TOKEN hint", request.Plain)
	}
	b.send("/approve " + m[1])
	expectLine(t, b, "Approved: running")
	testutil.WaitFor(t, "the request message updated in place", func() bool {
		got, ok := tg.Message(42, request.MessageID)
		return ok && (got.Markup == nil || len(got.Markup.Buttons()) == 0) && strings.Contains(got.Plain, "console:local")
	})
	for _, p := range []*botProc{b, a} { // Telegram runs on: stop them
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatalf("SIGINT: %v", err)
		}
		if code := p.wait(); code != 0 {
			t.Fatalf("exit %d after SIGINT; want 0", code)
		}
	}
	if got := readFile(t, runs); got != "run\n" {
		t.Errorf("runs.txt = %q; want the command run once", got)
	}
}
