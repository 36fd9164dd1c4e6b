package telegram_test

// End-to-end tests: the real engine, approval broker, SQLite store and tools
// (built by app from a configuration), the Telegram gateway on the
// unmodified library, the fake Bot API and the fake OpenAI server.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	"github.com/gatehouse-bot/gatehouse/gateways/telegram"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

const (
	e2eToken  = "555111:E2E-telegram-token-secret"
	e2eAPIKey = "sk-e2e-openai-key-000000000000000000"
)

var (
	owner = faketg.User{ID: 1001, FirstName: "Olga", Username: "olga"} // the approver
	guest = faketg.User{ID: 1002, FirstName: "Gus", Username: "gus"}   // allowed, not an approver
	team  = faketg.Chat{ID: -100777, Type: "supergroup", Title: "team"}
)

// e2e is a running gatehouse wired by app.
type e2e struct {
	tg        *faketg.Server
	ai        *fakeoai.Server
	workspace string
	logs      *testutil.SyncBuffer
	run       *gatewaytest.Runner // app.Run
}

func startE2E(t *testing.T) *e2e {
	t.Helper()
	return startE2EWith(t, faketg.Options{}, nil)
}

// startE2EWith is startE2E with a fake made with opts (its token, poll
// wait and query TTL set here) and the configuration changed by tune.
func startE2EWith(t *testing.T, opts faketg.Options, tune func(*config.Config)) *e2e {
	t.Helper()
	// A button press must be answered within QueryTTL, as on Telegram.
	opts.Token, opts.MaxPollWait, opts.QueryTTL = e2eToken, 200*time.Millisecond, 5*time.Second
	e := &e2e{
		tg:   faketg.New(opts),
		ai:   fakeoai.Start(t),
		logs: &testutil.SyncBuffer{},
	}
	dir, workspace := gatewaytest.Workspace(t)
	e.workspace = workspace
	cfg := e.config(t, dir)
	if tune != nil {
		tune(cfg)
	}
	log := zerolog.New(e.logs)
	run := gatewaytest.NewRunner(t, "app.Run", 10*time.Second)
	e.run = run
	a, err := app.New(run.Context(), app.Options{Config: cfg, Log: log, Secrets: secrets.New(e2eToken, e2eAPIKey),
		Tune: func(settings any) {
			c, ok := settings.(*telegram.Config)
			if !ok {
				t.Fatalf("Tune got %T, want *telegram.Config", settings)
			}
			fast := telegram.FastConfig(e.tg)
			fast.Token, fast.APIURL, fast.Mode, fast.Group = c.Token, c.APIURL, c.Mode, c.Group
			fast.MaxFileBytes = c.MaxFileBytes
			*c = fast
		}})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	run.Go(a.Run)
	t.Cleanup(func() {
		run.Stop()
		a.Close()
		e.tg.Close()
		gatewaytest.NoSecrets(t, e.logs.String(), e2eToken, "E2E-telegram-token")
	})
	return e
}

func (e *e2e) config(t *testing.T, dir string) *config.Config {
	t.Helper()
	yaml := fmt.Sprintf(`
llm:
  providers:
    - {name: fake, base_url: %q, api_key: %q, model: test-model}
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["telegram:1002"]}
hitl:
  approvers: ["telegram:1001"]
policy:
  rules:
    - {tool: shell, decision: approve}
    - {tool: "*", decision: allow}
tools: {workspace: %q}
store: {driver: sqlite, dsn: %q}
http: {listen: ""}
`, e.ai.URL(), e2eAPIKey, e2eToken, e.tg.URL(), e.workspace, filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// waitSent waits for a message in chat whose visible text contains want.
func (e *e2e) waitSent(t *testing.T, chat int64, want string) faketg.Sent {
	t.Helper()
	return gatewaytest.WaitFirst(t, fmt.Sprintf("%q in chat %d", want, chat), e.tg.Sent,
		func(s faketg.Sent) bool { return s.ChatID == chat && strings.Contains(s.Plain, want) })
}

// waitRequest waits for the approval request in chat and returns it with
// its token (read from the Approve button).
func (e *e2e) waitRequest(t *testing.T, chat int64) (faketg.Sent, string) {
	t.Helper()
	req := gatewaytest.WaitFirst(t, "an approval request", e.tg.Sent,
		func(s faketg.Sent) bool { return s.ChatID == chat && s.Markup != nil })
	token, ok := strings.CutPrefix(req.Markup.Buttons()[0].CallbackData, "a:")
	if !ok {
		t.Fatalf("first button %+v is not Approve", req.Markup.Buttons()[0])
	}
	return req, token
}

// waitAnswers waits for n callback answers and returns them.
func (e *e2e) waitAnswers(t *testing.T, n int) []faketg.Answer {
	t.Helper()
	testutil.WaitFor(t, fmt.Sprintf("%d callback answers", n), func() bool { return len(e.tg.Answers()) >= n })
	return e.tg.Answers()
}

// runs counts the lines the approved shell command appended.
func (e *e2e) runs(t *testing.T) int { return gatewaytest.ShellRuns(t, e.workspace) }

func TestE2EPrivateTurnWithToolCall(t *testing.T) {
	e := startE2E(t)
	gatewaytest.PushSlowClockTurn(e.ai, "It is **noon** in UTC.", func() bool { return len(e.tg.Actions()) > 0 })
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "what time is it?"})
	got := e.waitSent(t, guest.ID, "It is noon in UTC.")
	if got.ParseMode != "HTML" || !strings.Contains(got.Text, "<b>noon</b>") {
		t.Fatalf("reply %+v", got)
	}
	gatewaytest.CheckClockTurn(t, e.ai, "what time is it?")
	if len(e.tg.Actions()) == 0 {
		t.Fatal("no typing indicator during the turn")
	}
}

func TestE2EGroupAnswersOnlyWhenMentioned(t *testing.T) {
	e := startE2E(t)
	e.ai.Push(fakeoai.Text("Hello, team."))
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: team, Text: "chatting among ourselves"})
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: team, Text: "@gatehouse_bot say hello"})
	e.waitSent(t, team.ID, "Hello, team.")
	reqs := e.ai.Requests()
	if len(reqs) != 1 || reqs[0].LastUser() != "say hello" {
		t.Fatalf("model saw %+v", reqs)
	}
}

func TestE2EApprovalButtons(t *testing.T) {
	e := startE2E(t)
	gatewaytest.PushShellTurn(e.ai)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: team, Text: "@gatehouse_bot add a line to ran.txt"})
	req, token := e.waitRequest(t, team.ID)
	e.waitSent(t, team.ID, "I asked an approver to allow it.")

	// A non-approver's press is refused and runs nothing.
	e.tg.InjectCallback(faketg.Callback{From: guest, ChatID: team.ID, MessageID: req.MessageID, Data: "a:" + token})
	if a := e.waitAnswers(t, 1); a[0].Text != "not authorised" {
		t.Fatalf("non-approver toast %q", a[0].Text)
	}
	if n := e.runs(t); n != 0 {
		t.Fatalf("ran %d times after a refused press", n)
	}
	if m, _ := e.tg.Message(team.ID, req.MessageID); m.Markup == nil {
		t.Fatal("a refused press removed the buttons")
	}

	// The approver double-taps: it runs once.
	for range 2 {
		e.tg.InjectCallback(faketg.Callback{From: owner, ChatID: team.ID, MessageID: req.MessageID, Data: "a:" + token})
	}
	answers := e.waitAnswers(t, 3)[1:]
	toasts := answers[0].Text + " | " + answers[1].Text
	if !strings.Contains(toasts, "approved — running") || !strings.Contains(toasts, "already approved") {
		t.Fatalf("double press toasts: %s", toasts)
	}
	e.waitSent(t, team.ID, "It ran: ran.txt has a new line.")
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times, want exactly once", n)
	}
	testutil.WaitFor(t, "the request edited", func() bool {
		m, _ := e.tg.Message(team.ID, req.MessageID)
		return m.Markup == nil && strings.Contains(m.Plain, "by telegram:1001")
	})

	// The request went once, with buttons, through the gateway's
	// PromptApproval (no duplicate plain text), telling how to answer by
	// typing while open; resolved, it keeps the request and loses that hint.
	if !strings.Contains(req.Plain, "Reply /approve "+token) {
		t.Errorf("open request lacks the typed-command hint:\n%s", req.Plain)
	}
	n := 0
	for _, s := range e.tg.Sent() {
		if s.Method == "sendMessage" && s.ChatID == team.ID && strings.Contains(s.Plain, "Approval needed") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the request was sent %d times to the chat", n)
	}
	m, _ := e.tg.Message(team.ID, req.MessageID)
	if strings.Contains(m.Plain, "Reply /approve") {
		t.Errorf("resolved request still says how to reply:\n%s", m.Plain)
	}
	if !strings.Contains(m.Plain, "Approval needed: shell") || !strings.Contains(m.Plain, fmt.Sprintf("Asked in telegram:%d", team.ID)) {
		t.Errorf("resolved request lost its text:\n%s", m.Plain)
	}
}

func TestE2ESlowApprovedToolStillGetsItsToast(t *testing.T) {
	e := startE2E(t)
	// The command runs until the test lets it go, which it does only once
	// the press was answered: a toast sent after the run would never come.
	e.ai.Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "call_slow", Name: "shell",
			Args: `{"command":"while [ ! -e go ]; do sleep 0.02; done; echo ran >> ran.txt"}`}),
		fakeoai.Text("I asked an approver to allow it."),
		fakeoai.Text("It ran: ran.txt has a new line."),
	)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: team, Text: "@gatehouse_bot do the slow job"})
	req, token := e.waitRequest(t, team.ID)
	e.tg.InjectCallback(faketg.Callback{From: owner, ChatID: team.ID, MessageID: req.MessageID, Data: "a:" + token})
	if a := e.waitAnswers(t, 1); a[0].Text != "approved — running…" {
		t.Fatalf("toast %q", a[0].Text)
	}
	if n := e.runs(t); n != 0 {
		t.Fatalf("ran %d times before it was let go", n)
	}
	if err := os.WriteFile(filepath.Join(e.workspace, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.waitSent(t, team.ID, "It ran: ran.txt has a new line.")
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	if n := e.tg.LateAnswers(); n != 0 {
		t.Fatalf("%d callback answers came too late", n)
	}
}

func TestE2EApproveTypedInOwnerDM(t *testing.T) {
	e := startE2E(t)
	gatewaytest.PushShellTurn(e.ai)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: team, Text: "@gatehouse_bot add a line to ran.txt"})
	req, token := e.waitRequest(t, team.ID)
	e.tg.InjectMessage(faketg.Message{From: &owner, Chat: faketg.Chat{ID: owner.ID, Type: "private"}, Text: "/approve " + token})
	e.waitSent(t, team.ID, "It ran: ran.txt has a new line.")
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	testutil.WaitFor(t, "a reply in the owner's DM", func() bool {
		for _, s := range e.tg.Sent() {
			if s.ChatID == owner.ID {
				return true
			}
		}
		return false
	})
	testutil.WaitFor(t, "the group's request edited", func() bool {
		m, _ := e.tg.Message(team.ID, req.MessageID)
		return m.Markup == nil
	})
	for _, r := range e.ai.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, token) {
				t.Fatalf("the approval token reached the model: %q", m.Content)
			}
		}
	}
}
