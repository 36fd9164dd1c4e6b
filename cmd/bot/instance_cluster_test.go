package main

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestInstanceNameInUseIsRefused: A runs an approved shell call and holds
// Telegram's lease; a second bot started under A's name on the same
// database exits 1, naming the name and how to choose another, before
// doing anything: A's call is not marked interrupted (it ends executed,
// audited once), and A's lease and heartbeat row stay A's. (The second
// process used to run its restart recovery against A, marking A's live
// call interrupted, and ran on.)
func TestInstanceNameInUseIsRefused(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	cfg := clusterConfig(t)
	old := "    api_url: https://api.telegram.org\n    allow: []"
	if !strings.Contains(cfg, old) {
		t.Fatalf("the shipped config.yaml no longer has %q; update this test", old)
	}
	writeFile(t, dir, "config.yaml", strings.Replace(cfg, old, "    api_url: "+tg.URL()+"\n    allow: [\"42\"]", 1))
	env := baseEnv(dir, "GATEHOUSE_DSN="+dsn, "GATEHOUSE_INSTANCE=a", "TELEGRAM_BOT_TOKEN="+tg.Token())
	ws := filepath.Join(dir, "workspace")
	t.Cleanup(func() { killShellGroup(t, filepath.Join(ws, "sh.pid")) })

	a := startBot(t, dir, env)
	testutil.WaitFor(t, "A to poll Telegram", func() bool { return len(tg.Polls()) > 0 })
	// Three leases long (lease_ttl 2s): the second bot comes and goes meanwhile.
	a.send("run `echo start >> started.txt; echo $$ > sh.pid; sleep 6; echo run >> runs.txt`")
	expectLine(t, a, "Approval needed: shell")
	token := expectToken(t, a)
	a.send("/approve " + token)
	testutil.WaitFor(t, "the approved call to start", func() bool { return readFile(t, filepath.Join(ws, "started.txt")) == "start\n" })

	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	var process string
	if err := conn.QueryRow(context.Background(), `SELECT process FROM instances WHERE name = 'a'`).Scan(&process); err != nil {
		t.Fatalf("A's heartbeat row: %v", err)
	}

	second := startBot(t, dir, env)
	testutil.WaitFor(t, "the second bot named a to exit", func() bool {
		select {
		case <-second.done:
			return true
		default:
			return false
		}
	})
	if code := second.wait(); code != exitFail {
		t.Errorf("the second bot named a: exit %d; want %d", code, exitFail)
	}
	msg := second.stderr.String()
	for _, want := range []string{`instance "a"`, "store.instance", "GATEHOUSE_INSTANCE"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the second bot's message does not contain %q:\n%s", want, msg)
		}
	}
	if strings.Contains(second.stdout(), "Interrupted") {
		t.Errorf("the second bot announced A's live call interrupted:\n%s", second.stdout())
	}

	var holder, now string
	if err := conn.QueryRow(context.Background(), `SELECT holder FROM leases WHERE name LIKE 'telegram%'`).Scan(&holder); err != nil || holder != "a" {
		t.Errorf("Telegram's lease after the second bot stopped: holder %q, %v; want still A's", holder, err)
	}
	if err := conn.QueryRow(context.Background(), `SELECT process FROM instances WHERE name = 'a'`).Scan(&now); err != nil || now != process {
		t.Errorf("A's heartbeat row after the second bot stopped: process %q, %v; want A's %q", now, err, process)
	}
	ran := expectLine(t, a, "Approved by console:local")
	if !strings.Contains(ran, token) || !strings.Contains(ran, "ran") {
		t.Errorf("outcome notice %q does not say request %s ran", ran, token)
	}
	if err := a.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("SIGINT: %v", err)
	}
	if code := a.wait(); code != 0 {
		t.Fatalf("A: exit %d after SIGINT; want 0", code)
	}
	if got := readFile(t, filepath.Join(ws, "runs.txt")); got != "run\n" {
		t.Errorf("runs.txt = %q; want the command run once", got)
	}
	got := auditOutcomes(t, dir, env)
	if got["executed"] != 1 || got["interrupted"] != 0 {
		t.Errorf("audit of the shell call: %v; want executed 1, interrupted 0", got)
	}
}

// TestAuditNamesTheInstance: on a shared store, `bot audit` names the
// instance that wrote each entry (issue 22): a shell call held on A and
// approved on B is "requested" by A's hand and "approved" and "executed"
// by B's, in the JSON ("instance") and in the table (INSTANCE).
func TestAuditNamesTheInstance(t *testing.T) {
	t.Parallel()
	dir, envA, envB := twoInstances(t)
	a := startBot(t, dir, envA)
	b := startBot(t, dir, envB)
	a.send("run `echo run >> runs.txt`")
	expectLine(t, a, "Approval needed: shell")
	token := expectToken(t, a)
	b.send("/approve " + token)
	expectLine(t, b, "Approved by console:local")
	for _, p := range []*botProc{a, b} {
		p.closeInput()
		if code := p.wait(); code != 0 {
			t.Fatalf("exit %d after end of input; want 0", code)
		}
	}

	r := runOnce(t, dir, envA, "", "audit", "--since", "1h", "--json")
	var entries []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &entries); r.code != 0 || err != nil {
		t.Fatalf("bot audit --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	want := map[string]string{"requested": "a", "approved": "b", "executed": "b"}
	got := map[string]string{}
	for _, e := range entries {
		if o, _ := e["outcome"].(string); e["tool"] == "shell" && want[o] != "" {
			got[o], _ = e["instance"].(string)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("the shell call's entries by outcome → instance: %v; want %v\n%s", got, want, r.stdout)
	}
	r = runOnce(t, dir, envA, "", "audit", "--since", "1h")
	lines := strings.Split(r.stdout, "\n")
	if r.code != 0 || !strings.HasSuffix(lines[0], "INSTANCE") {
		t.Fatalf("bot audit: exit %d; want a table with an INSTANCE column\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, l := range lines {
		if strings.Contains(l, " shell ") && strings.Contains(l, " executed ") && !strings.HasSuffix(l, " b") {
			t.Errorf("the executed row %q does not end with instance b", l)
		}
	}
}
