package slack_test

// End-to-end tests: the real engine, approval broker, SQLite store and tools
// (built by app from a configuration), the Slack gateway on the
// unmodified slack-go and its socketmode package, the fake Slack, the fake
// OpenAI server and, for the cross-platform approval, the Telegram gateway
// on the fake Bot API.

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	"github.com/gatehouse-bot/gatehouse/gateways/slack"
	"github.com/gatehouse-bot/gatehouse/gateways/telegram"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

const (
	e2eBotToken = "xoxb-E2E-slack-bot-token-secret"
	e2eAppToken = "xapp-E2E-slack-app-token-secret"
	e2eTgToken  = "555111:E2E-telegram-token-secret"
	e2eAPIKey   = "sk-e2e-openai-key-000000000000000000"
	e2eSecret   = "E2E-slack-signing-secret-value"
	owner       = "U0OWNER" // the approver (also telegram:1001)
	guest       = "U0GUEST" // allowed, not an approver
	stranger    = "U0STRANGER"
	channel     = "C0TEAM"
)

// e2e is a running gatehouse wired by app.
type e2e struct {
	sl        *fakeslack.Server
	tg        *faketg.Server
	ai        *fakeoai.Server
	workspace string
	logs      *testutil.SyncBuffer
}

func startE2E(t *testing.T, o fakeslack.Options) *e2e { return startE2EIn(t, o, "") }

// startE2EIn starts the bot; with a listen address, in events mode with
// the Events API served on http.listen at that address.
func startE2EIn(t *testing.T, o fakeslack.Options, listen string) *e2e {
	t.Helper()
	return startE2ETuned(t, o, listen, nil)
}

// startE2ETuned is startE2EIn with the configuration changed by tune.
func startE2ETuned(t *testing.T, o fakeslack.Options, listen string, tune func(*config.Config)) *e2e {
	t.Helper()
	o.BotToken, o.AppToken = e2eBotToken, e2eAppToken
	e := &e2e{
		sl:   fakeslack.New(o),
		tg:   faketg.New(faketg.Options{Token: e2eTgToken, MaxPollWait: 200 * time.Millisecond}),
		ai:   fakeoai.Start(t),
		logs: &testutil.SyncBuffer{},
	}
	dir, workspace := gatewaytest.Workspace(t)
	e.workspace = workspace
	cfg := e.config(t, dir, listen)
	if tune != nil {
		tune(cfg)
	}
	run := gatewaytest.NewRunner(t, "app.Run", 10*time.Second)
	a, err := app.New(run.Context(), app.Options{Config: cfg, Log: zerolog.New(e.logs), Secrets: secrets.New(e2eAPIKey),
		Tune: func(settings any) {
			switch c := settings.(type) {
			case *slack.Config:
				fast := slack.FastConfig(e.sl)
				fast.BotToken, fast.AppToken, fast.APIURL, fast.Mode, fast.Channel = c.BotToken, c.AppToken, c.APIURL, c.Mode, c.Channel
				fast.SigningSecret, fast.Listen = c.SigningSecret, c.Listen
				*c = fast
			case *telegram.Config:
				c.PollTimeout, c.StallMargin, c.RepollEvery = time.Second, 300*time.Millisecond, 20*time.Millisecond
				c.Pace = gateways.Limits{PerChat: gateways.Limit{N: 5, Per: 5 * time.Millisecond}, Global: gateways.Limit{N: 50, Per: 5 * time.Millisecond}}
				c.Backoff = gateways.Backoff{Min: 5 * time.Millisecond, Max: 50 * time.Millisecond}
			default:
				t.Fatalf("Tune got %T", settings)
			}
		}})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	run.Go(a.Run)
	if listen == "" {
		testutil.WaitFor(t, "the socket mode connection", func() bool { return e.sl.Live() > 0 })
	}
	t.Cleanup(func() {
		// An envelope written less than 3 s ago and not acknowledged yet
		// counts as late until it is; one really late never leaves the list.
		testutil.WaitFor(t, "every envelope acknowledged within 3s", func() bool {
			return len(e.sl.Unacknowledged(3*time.Second)) == 0
		})
		run.Stop()
		a.Close()
		e.sl.Close()
		e.tg.Close()
		gatewaytest.NoSecrets(t, e.logs.String(), e2eBotToken, e2eAppToken, e2eTgToken, e2eSecret, "E2E-slack-bot", "E2E-slack-app", "E2E-telegram-token", "E2E-slack-signing")
	})
	return e
}

func (e *e2e) config(t *testing.T, dir, listen string) *config.Config {
	t.Helper()
	mode := ""
	if listen != "" {
		mode = fmt.Sprintf(", mode: events, signing_secret: %q", e2eSecret)
	}
	yaml := fmt.Sprintf(`
llm:
  providers:
    - {name: fake, base_url: %q, api_key: %q, model: test-model}
gateways:
  console: {enabled: false}
  slack: {bot_token: %q, app_token: %q, api_url: %q, allow: [%s]%s}
  telegram: {token: %q, api_url: %q, allow: []}
hitl:
  approvers: ["slack:%s", "telegram:1001"]
policy:
  rules:
    - {tool: shell, decision: approve}
    - {tool: "*", decision: allow}
tools: {workspace: %q}
store: {driver: sqlite, dsn: %q}
http: {listen: %q}
`, e.ai.URL(), e2eAPIKey, e2eBotToken, e2eAppToken, e.sl.URL()+"/api/", guest, mode, e2eTgToken, e.tg.URL(), owner,
		e.workspace, filepath.Join(dir, "gatehouse.db"), listen)
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// waitPost waits for a post in channel whose text contains want.
func (e *e2e) waitPost(t *testing.T, channel, want string) fakeslack.Post {
	t.Helper()
	return gatewaytest.WaitFirst(t, fmt.Sprintf("%q in %s", want, channel), func() []fakeslack.Post { return e.sl.Posts(channel) },
		func(p fakeslack.Post) bool { return strings.Contains(p.Text, want) })
}

// waitRequest waits for an approval request with buttons in channel and
// returns it with its token.
func (e *e2e) waitRequest(t *testing.T, channel string) (fakeslack.Post, string) {
	t.Helper()
	req := gatewaytest.WaitFirst(t, "an approval request", func() []fakeslack.Post { return e.sl.Posts(channel) },
		func(p fakeslack.Post) bool { return len(p.Buttons()) > 0 })
	return req, req.Buttons()[0].Value
}

// runs counts the lines the approved shell command appended.
func (e *e2e) runs(t *testing.T) int { return gatewaytest.ShellRuns(t, e.workspace) }

// raiseRequest has the guest ask, in a channel thread, for what needs
// approval, and returns the thread, the request and its token.
func (e *e2e) raiseRequest(t *testing.T) (string, fakeslack.Post, string) {
	t.Helper()
	gatewaytest.PushShellTurn(e.ai)
	thread := e.sl.InjectMention(channel, guest, "add a line to ran.txt", "")
	req, token := e.waitRequest(t, channel)
	if req.ThreadTS != thread {
		t.Fatalf("request outside the thread %s: %+v", thread, req)
	}
	return thread, req, token
}

func TestE2EDMTurnWithToolCall(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	gatewaytest.PushClockTurn(e.ai, "It is **noon** in UTC & all is well.")
	e.sl.InjectDM(guest, "what time is it?")
	got := e.waitPost(t, fakeslack.DMChannel(guest), "It is *noon* in UTC &amp; all is well.")
	if got.ThreadTS != "" {
		t.Fatalf("a DM reply in a thread: %+v", got)
	}
	gatewaytest.CheckClockTurn(t, e.ai, "what time is it?")
}

func TestE2EMentionAnsweredInThreadAndFollowUpContinues(t *testing.T) {
	e := startE2E(t, fakeslack.Options{EchoPosts: true})
	e.ai.Push(fakeoai.Text("Hello, team."), fakeoai.Text("Still here."))
	e.sl.InjectMessage(fakeslack.Event{Channel: channel, User: guest, Text: "chatting among ourselves"})
	ts := e.sl.InjectMention(channel, guest, "say hello", "")
	if p := e.waitPost(t, channel, "Hello, team."); p.ThreadTS != ts {
		t.Fatalf("reply not in the mention's thread %s: %+v", ts, p)
	}
	e.sl.InjectMessage(fakeslack.Event{Channel: channel, User: guest, Text: "are you still there?", ThreadTS: ts})
	if p := e.waitPost(t, channel, "Still here."); p.ThreadTS != ts {
		t.Fatalf("follow-up answer not in the thread: %+v", p)
	}
	reqs := e.ai.Requests()
	if len(reqs) != 2 || reqs[0].LastUser() != "say hello" || reqs[1].LastUser() != "are you still there?" {
		t.Fatalf("model saw %+v", reqs)
	}
	var history []string
	for _, m := range reqs[1].Messages {
		history = append(history, m.Content)
	}
	if h := strings.Join(history, "|"); !strings.Contains(h, "say hello") || !strings.Contains(h, "Hello, team.") {
		t.Fatalf("the follow-up did not continue the conversation: %s", h)
	}
}

func TestE2ELongReplyCompleteAndInOrder(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	var b strings.Builder
	for i := 0; b.Len() < 45000; i++ {
		fmt.Fprintf(&b, "line %05d of the long answer\n", i)
	}
	long := b.String()[:45000]
	e.ai.Push(fakeoai.Text(long))
	e.sl.InjectDM(guest, "tell me everything")
	dm := fakeslack.DMChannel(guest)
	lastLine := strings.TrimSpace(long[strings.LastIndex(strings.TrimRight(long, "\n"), "\n")+1:])
	e.waitPost(t, dm, lastLine)
	var got strings.Builder
	for _, p := range e.sl.Posts(dm) {
		got.WriteString(p.Text + "\n")
	}
	if strings.Join(strings.Fields(got.String()), " ") != strings.Join(strings.Fields(long), " ") {
		t.Fatal("the posts do not add up to the reply, in order")
	}
}

func TestE2ERateLimitStormEveryReplyOnce(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	e.sl.FailNext("chat.postMessage", 3, fakeslack.FaultRateLimited)
	e.ai.Respond(func(r fakeoai.Request) fakeoai.Step { return fakeoai.Text("echo: " + r.LastUser()) })
	for i := range 3 {
		e.sl.InjectDM(guest, fmt.Sprintf("message %d", i))
	}
	dm := fakeslack.DMChannel(guest)
	testutil.WaitFor(t, "three replies", func() bool { return len(e.sl.Posts(dm)) >= 3 })
	seen := map[string]int{}
	for _, p := range e.sl.Posts(dm) {
		seen[p.Text]++
	}
	for i := range 3 {
		if n := seen[fmt.Sprintf("echo: message %d", i)]; n != 1 {
			t.Fatalf("reply %d arrived %d times: %v", i, n, seen)
		}
	}
	if e.sl.RateLimited() != 3 || e.sl.Early() != 0 {
		t.Fatalf("429s %d, early calls %d", e.sl.RateLimited(), e.sl.Early())
	}
}

func TestE2EApprovalButtonRefusedThenDoublePressRunsOnce(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	thread, req, token := e.raiseRequest(t)
	e.waitPost(t, channel, "I asked an approver to allow it.")

	// A non-approver's press is refused, visibly to them only, and runs nothing.
	e.sl.InjectBlockAction(fakeslack.BlockAction{User: guest, Channel: channel, MessageTS: req.TS, ThreadTS: thread, ActionID: "gh_approve", Value: token})
	testutil.WaitFor(t, "the refusal", func() bool { return len(e.sl.Ephemerals()) == 1 })
	if eph := e.sl.Ephemerals()[0]; eph.User != guest || !strings.Contains(eph.Text, "Not authorised") {
		t.Fatalf("ephemeral %+v", eph)
	}
	if n := e.runs(t); n != 0 {
		t.Fatalf("ran %d times after a refused press", n)
	}
	if m, _ := e.sl.Message(channel, req.TS); len(m.Buttons()) == 0 {
		t.Fatal("a refused press removed the buttons")
	}

	// The approver double-clicks: it runs once.
	for range 2 {
		e.sl.InjectBlockAction(fakeslack.BlockAction{User: owner, Channel: channel, MessageTS: req.TS, ThreadTS: thread, ActionID: "gh_approve", Value: token})
	}
	e.waitPost(t, channel, "It ran: ran.txt has a new line.")
	testutil.WaitFor(t, "both presses answered", func() bool { return len(e.sl.Ephemerals()) == 3 })
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times, want exactly once", n)
	}
	testutil.WaitFor(t, "the request updated", func() bool {
		m, _ := e.sl.Message(channel, req.TS)
		return len(m.Buttons()) == 0 && strings.Contains(string(m.Blocks), "by slack:"+owner)
	})
}

func TestE2EApproveSlashCommand(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	_, req, token := e.raiseRequest(t)
	// A non-approver's /approve is refused, visibly to them only.
	e.sl.InjectSlashCommand(fakeslack.SlashCommand{Command: "/approve", Text: token, User: guest, Channel: channel})
	testutil.WaitFor(t, "the refusal", func() bool {
		rp := e.sl.ResponseURLPosts()
		return len(rp) == 1 && rp[0].ResponseType == "ephemeral" && strings.Contains(rp[0].Text, "Not authorised")
	})
	if n := e.runs(t); n != 0 {
		t.Fatalf("ran %d times after a refused /approve", n)
	}
	e.sl.InjectSlashCommand(fakeslack.SlashCommand{Command: "/approve", Text: token, User: owner, Channel: channel})
	e.waitPost(t, channel, "It ran: ran.txt has a new line.")
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	testutil.WaitFor(t, "the request updated", func() bool {
		m, _ := e.sl.Message(channel, req.TS)
		return len(m.Buttons()) == 0
	})
	// /pending answers the approver only.
	e.sl.InjectSlashCommand(fakeslack.SlashCommand{Command: "/pending", User: owner, Channel: channel})
	testutil.WaitFor(t, "the /pending answer", func() bool {
		for _, p := range e.sl.ResponseURLPosts() {
			if p.ResponseType == "ephemeral" && strings.Contains(strings.ToLower(p.Text), "pending") {
				return true
			}
		}
		return false
	})
}

func TestE2ERequestInSlackApprovedFromTelegram(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	thread, req, token := e.raiseRequest(t)
	e.tg.InjectMessage(faketg.Message{From: &faketg.User{ID: 1001, FirstName: "Olga"}, Chat: faketg.Chat{ID: 1001, Type: "private"}, Text: "/approve " + token})
	if p := e.waitPost(t, channel, "It ran: ran.txt has a new line."); p.ThreadTS != thread {
		t.Fatalf("outcome outside the thread: %+v", p)
	}
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	testutil.WaitFor(t, "the Slack request updated with who approved", func() bool {
		m, _ := e.sl.Message(channel, req.TS)
		return len(m.Buttons()) == 0 && strings.Contains(string(m.Blocks), "telegram:1001")
	})
}

func TestE2EStrangerToldIdentityNothingReachesLLM(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	e.sl.InjectDM(stranger, "hello?")
	p := e.waitPost(t, fakeslack.DMChannel(stranger), "slack:"+stranger)
	if !strings.Contains(p.Text, "allow") {
		t.Fatalf("refusal %q", p.Text)
	}
	if n := len(e.ai.Requests()); n != 0 {
		t.Fatalf("%d model requests for a stranger", n)
	}
}

func TestE2EDisconnectAndDroppedSocket(t *testing.T) {
	e := startE2E(t, fakeslack.Options{DisconnectGrace: 200 * time.Millisecond})
	e.ai.Respond(func(r fakeoai.Request) fakeoai.Step { return fakeoai.Text("echo: " + r.LastUser()) })
	dm := fakeslack.DMChannel(guest)
	e.sl.Disconnect()
	testutil.WaitFor(t, "a reconnection", func() bool { return e.sl.Connections() >= 2 && e.sl.Live() > 0 })
	e.sl.InjectDM(guest, "after disconnect")
	e.waitPost(t, dm, "echo: after disconnect")
	e.sl.DropConnection()
	testutil.WaitFor(t, "a reconnection after the drop", func() bool { return e.sl.Connections() >= 3 && e.sl.Live() > 0 })
	e.sl.InjectDM(guest, "after drop")
	e.waitPost(t, dm, "echo: after drop")
}

func TestE2EApproveTypedWithoutSlashInDM(t *testing.T) {
	e := startE2E(t, fakeslack.Options{})
	_, req, token := e.raiseRequest(t)
	// Slack never delivers "/approve …" typed in a DM as a message; the
	// slash-less form is what an approver types there.
	e.sl.InjectDM(owner, "approve "+strings.ToLower(token))
	e.waitPost(t, channel, "It ran: ran.txt has a new line.")
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	testutil.WaitFor(t, "the request updated", func() bool {
		m, _ := e.sl.Message(channel, req.TS)
		return len(m.Buttons()) == 0
	})
	for _, r := range e.ai.Requests() {
		if strings.Contains(r.LastUser(), token) {
			t.Fatalf("the approval command reached the model: %q", r.LastUser())
		}
	}
}

func TestE2EEventsAPIModeOnHTTPListen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e := startE2EIn(t, fakeslack.Options{}, addr)
	target := "http://" + addr + slack.EventsPath
	post := func(r *http.Request) int {
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	signer := e.sl.Signer(e2eSecret)
	testutil.WaitFor(t, "the Events API served on http.listen", func() bool {
		return post(signer.URLVerification(target, "c")) == http.StatusOK
	})
	ev := fakeslack.Event{Channel: fakeslack.DMChannel(guest), ChannelType: "im", User: guest, Text: "hello over http"}
	for name, s := range map[string]fakeslack.Signer{"forged": signer.Forge(), "stale": signer.Stale(10 * time.Minute)} {
		r, _, _ := s.EventCallback(target, ev)
		if code := post(r); code != http.StatusUnauthorized {
			t.Fatalf("%s request: status %d, want 401", name, code)
		}
	}
	e.ai.Push(fakeoai.Text("Hello from the Events API."))
	// Until the gateway's Run has started the handler answers 503, and
	// Slack retries: so does the test.
	testutil.WaitFor(t, "the signed event accepted", func() bool {
		r, _, _ := signer.EventCallback(target, ev)
		return post(r) == http.StatusOK
	})
	e.waitPost(t, fakeslack.DMChannel(guest), "Hello from the Events API.")
	if reqs := e.ai.Requests(); len(reqs) != 1 || reqs[0].LastUser() != "hello over http" {
		t.Fatalf("the model saw %+v (the refused requests must not reach it)", reqs)
	}
}
