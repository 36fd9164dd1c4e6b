package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestGrantTypedOnTheConsole is issue 30 §3 through the binary with the
// shipped config: "/approve TOKEN for 2m" runs the call, and the
// identical call then runs without a request while a call with its
// argument changed is held; a duration out of 1m–24h is refused with the
// range and the request stays open. (Expiry is tested at the broker with
// a fake clock: TestGrantCoversIdenticalCallsUntilItExpires.)
func TestGrantTypedOnTheConsole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	// The call must not name the file it changes: a grant binds the
	// files its call names, so "echo a >> out.txt" is held again once
	// out.txt changed (as a standing allow is).
	writeFile(t, filepath.Join(dir, "workspace"), "append.sh", "echo \"$1\" >> out.txt\n")
	out := filepath.Join(dir, "workspace", "out.txt")
	p := startBot(t, dir, baseEnv(dir))

	p.send("run `sh append.sh a`")
	token := expectToken(t, p)
	p.send("/approve " + token + " for 30s")
	expectLine(t, p, "is not a duration from 1m to 24h")
	p.send("/approve " + token + " for 2m")
	expectLine(t, p, "Grant #1 given")
	waitFile(t, out, func(s string) bool { return s == "a\n" })

	requests := strings.Count(p.stdout(), "Approval needed")
	p.send("run `sh append.sh a`")
	waitFile(t, out, func(s string) bool { return s == "a\na\n" })
	p.send("run `sh append.sh b`")
	expectLine(t, p, "Approval needed: shell")
	expectToken(t, p)
	if got := strings.Count(p.stdout(), "Approval needed"); got != requests+1 {
		t.Errorf("%d approval requests after the identical and the changed call, want %d:\n%s", got, requests+1, p.stdout())
	}
	p.closeInput()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	if got := readFile(t, out); got != "a\na\n" {
		t.Errorf("out.txt = %q; the changed call ran without approval", got)
	}
}

// TestGrantButtonOnTelegram: the binary against the Telegram fake, with
// allow_self_approval false. A member's request in a group carries the
// "Approve 30 min" button; the approver's press runs the call and grants
// it: the member's identical call runs without a request, a changed one
// is held, and so is the approver's own identical call (four-eyes). /rules
// lists the grant with its granter and expiry, /unallow 1 ends it, and
// the identical call is held again. The audit has the grant given, its
// use (the run's row) and its removal.
func TestGrantButtonOnTelegram(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	ai := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		last := lastMessage(r)
		if _, cmd, ok := strings.Cut(last.Content, "run: "); ok && last.Role == "user" {
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "shell", Args: fmt.Sprintf(`{"command":%q}`, cmd)})
		}
		return fakeopenai.Text("MODEL: ok.")
	})
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %s, api_key: "sk-fake-key-0000000000", model: fake-model}
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["telegram:1002"]}
hitl:
  approvers: [telegram:1001]
  allow_self_approval: false
tools: {workspace: ./workspace}
store: {dsn: gatehouse.db}
http: {listen: ""}
log: {level: info, format: json}
`, ai.URL(), tg.Token(), tg.URL()))
	p := startBot(t, dir, baseEnv(dir))
	owner := faketg.User{ID: 1001, FirstName: "Olga", Username: "olga"}
	member := faketg.User{ID: 1002, FirstName: "Gus", Username: "gus"}
	group := faketg.Chat{ID: -100777, Type: "group", Title: "team"}
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range tg.Sent() {
				t.Logf("sent to %d: %q", s.ChatID, s.Plain)
			}
		}
	})
	requests := func() []faketg.Sent {
		var out []faketg.Sent
		for _, s := range tg.Sent() {
			if s.ChatID == group.ID && s.Method == "sendMessage" && strings.Contains(s.Plain, "Approval needed") {
				out = append(out, s)
			}
		}
		return out
	}
	ask := func(u faketg.User, cmd string) {
		t.Helper()
		tg.InjectMessage(faketg.Message{From: &u, Chat: group, Text: "@" + tg.Bot().Username + " run: " + cmd})
	}
	waitRequests := func(n int) faketg.Sent {
		t.Helper()
		testutil.WaitFor(t, fmt.Sprintf("%d approval requests in the group", n), func() bool { return len(requests()) >= n })
		if got := len(requests()); got != n {
			t.Fatalf("%d approval requests in the group, want %d", got, n)
		}
		return requests()[n-1]
	}
	answer := func(u faketg.User, text, want string) {
		t.Helper()
		before := len(tg.Sent())
		tg.InjectMessage(faketg.Message{From: &u, Chat: group, Text: text})
		testutil.WaitFor(t, fmt.Sprintf("%q answered with %q", text, want), func() bool {
			for _, s := range tg.Sent()[before:] {
				if s.ChatID == group.ID && strings.Contains(s.Plain, want) {
					return true
				}
			}
			return false
		})
	}
	// The call must not name the file it changes (a grant binds the
	// files its call names, as a standing allow does).
	writeFile(t, filepath.Join(dir, "workspace"), "append.sh", "echo \"$1\" >> log.txt\n")
	logFile := filepath.Join(dir, "workspace", "log.txt")

	ask(member, "sh append.sh a")
	req := waitRequests(1)
	var token string
	for _, b := range req.Markup.Buttons() {
		if tok, ok := strings.CutPrefix(b.CallbackData, "g:"); ok && b.Text == "⏱ Approve 30 min" {
			token = tok
		}
	}
	if token == "" {
		t.Fatalf("request buttons %+v: no Approve 30 min", req.Markup.Buttons())
	}
	tg.InjectCallback(faketg.Callback{From: owner, ChatID: group.ID, MessageID: req.MessageID, Data: "g:" + token})
	waitFile(t, logFile, func(s string) bool { return s == "a\n" })

	ask(member, "sh append.sh a") // identical: runs without a request
	waitFile(t, logFile, func(s string) bool { return s == "a\na\n" })
	ask(member, "sh append.sh b") // changed: held
	waitRequests(2)
	ask(owner, "sh append.sh a") // the granter's own: held (four-eyes)
	waitRequests(3)

	answer(owner, "/rules", "granted by telegram:1001, until ")
	answer(owner, "/unallow 1", "Removed grant #1")
	ask(member, "sh append.sh a") // the grant ended: held again
	waitRequests(4)

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	if got := readFile(t, logFile); got != "a\na\n" {
		t.Errorf("log.txt = %q; a held call ran", got)
	}
	r := runOnce(t, dir, baseEnv(dir), "", "audit", "-json")
	for _, want := range []string{`"granted"`, "allowed by grant #1 by telegram:1001 until", `"unallowed"`, "grant #1 by telegram:1001 removed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("bot audit (exit %d) lacks %q:\n%s\n%s", r.code, want, r.stdout, r.stderr)
		}
	}
}
