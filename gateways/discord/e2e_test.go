package discord_test

// End-to-end tests: the real engine, approval broker, SQLite store and tools
// (built by app from a configuration), the Discord gateway on the
// unmodified discordgo, the fake Discord API and gateway, the fake
// Telegram Bot API and the fake OpenAI server.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/discord"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	"github.com/gatehouse-bot/gatehouse/gateways/telegram"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

const (
	e2eToken   = "MTIzNDU2.E2E-discord-token-secret"
	e2eTGToken = "555111:E2E-telegram-token-secret"
	e2eAPIKey  = "sk-e2e-openai-key-000000000000000000"
	guild      = "5001"
	team       = "4001"
)

var (
	owner    = fakediscord.User{ID: "3001", Username: "olga"} // the approver
	guest    = fakediscord.User{ID: "3002", Username: "gus"}  // allowed, not an approver
	stranger = fakediscord.User{ID: "3003", Username: "sam"}  // on no list
	tgOwner  = faketg.User{ID: 1001, FirstName: "Olga", Username: "olga"}
)

// e2e is a running gatehouse wired by app.
type e2e struct {
	dc        *fakediscord.Server
	tg        *faketg.Server
	ai        *fakeoai.Server
	workspace string
	logs      *testutil.SyncBuffer
}

func startE2E(t *testing.T) *e2e {
	t.Helper()
	return startE2EWith(t, nil)
}

// startE2EWith is startE2E with the configuration changed by tune.
func startE2EWith(t *testing.T, tune func(*config.Config)) *e2e {
	t.Helper()
	e := &e2e{
		dc:   fakediscord.New(fakediscord.Options{Token: e2eToken, HeartbeatInterval: 100 * time.Millisecond}),
		tg:   faketg.New(faketg.Options{Token: e2eTGToken, MaxPollWait: 200 * time.Millisecond, QueryTTL: 5 * time.Second}),
		ai:   fakeoai.Start(t),
		logs: &testutil.SyncBuffer{},
	}
	dir, workspace := gatewaytest.Workspace(t)
	e.workspace = workspace
	cfg := e.config(t, dir)
	if tune != nil {
		tune(cfg)
	}
	run := gatewaytest.NewRunner(t, "app.Run", 15*time.Second)
	a, err := app.New(run.Context(), app.Options{Config: cfg, Log: zerolog.New(e.logs), Secrets: secrets.New(e2eToken, e2eTGToken, e2eAPIKey),
		Tune: func(settings any) {
			switch c := settings.(type) {
			case *discord.Config:
				fast := discord.FastConfig(e.dc)
				fast.Token, fast.APIURL, fast.GatewayURL, fast.Guild, fast.GuildID = c.Token, c.APIURL, c.GatewayURL, c.Guild, c.GuildID
				*c = fast
			case *telegram.Config:
				c.PollTimeout, c.StallMargin, c.RepollEvery = time.Second, 300*time.Millisecond, 20*time.Millisecond
				c.Pace = gateways.Limits{PerChat: gateways.Limit{N: 5, Per: 5 * time.Millisecond}, Global: gateways.Limit{N: 50, Per: 5 * time.Millisecond}}
				c.Backoff = gateways.Backoff{Min: 5 * time.Millisecond, Max: 50 * time.Millisecond}
				c.RetryAfterUnit, c.RetryFor, c.SendTimeout = 10*time.Millisecond, 10*time.Second, 5*time.Second
			default:
				t.Fatalf("Tune got %T", settings)
			}
		}})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	run.Go(a.Run)
	t.Cleanup(func() {
		run.Stop()
		a.Close()
		e.dc.Close()
		e.tg.Close()
		gatewaytest.NoSecrets(t, e.logs.String(), e2eToken, "E2E-discord-token")
	})
	testutil.WaitFor(t, "the Discord session", func() bool { return len(e.dc.Identifies()) > 0 })
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
  discord: {token: %q, api_url: %q, gateway_url: %q, allow: ["discord:3002"]}
  telegram: {token: %q, api_url: %q}
hitl:
  approvers: ["discord:3001", "telegram:1001"]
policy:
  rules:
    - {tool: shell, decision: approve}
    - {tool: "*", decision: allow}
tools: {workspace: %q}
store: {driver: sqlite, dsn: %q}
http: {listen: ""}
`, e.ai.URL(), e2eAPIKey, e2eToken, e.dc.URL(), e.dc.GatewayURL(), e2eTGToken, e.tg.URL(), e.workspace, filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// waitSent waits for a message the bot created in channel containing want.
func (e *e2e) waitSent(t *testing.T, channel, want string) fakediscord.Sent {
	t.Helper()
	return gatewaytest.WaitFirst(t, fmt.Sprintf("%q in channel %s", want, channel), func() []fakediscord.Sent { return e.dc.Messages(channel) },
		func(s fakediscord.Sent) bool { return strings.Contains(s.Content, want) })
}

// waitRequest waits for the approval request in channel and returns it
// with its token (read from the Approve button).
func (e *e2e) waitRequest(t *testing.T, channel string) (fakediscord.Sent, string) {
	t.Helper()
	req := gatewaytest.WaitFirst(t, "an approval request", func() []fakediscord.Sent { return e.dc.Messages(channel) },
		func(s fakediscord.Sent) bool { return len(s.Components) > 0 })
	token, ok := strings.CutPrefix(fakediscord.Buttons(req.Components)[0].CustomID, "gh:a:")
	if !ok {
		t.Fatalf("first button %+v is not Approve", fakediscord.Buttons(req.Components)[0])
	}
	return req, token
}

// waitFollowups waits for n ephemeral follow-ups (press outcomes).
func (e *e2e) waitFollowups(t *testing.T, n int) []fakediscord.Sent {
	t.Helper()
	var out []fakediscord.Sent
	testutil.WaitFor(t, fmt.Sprintf("%d follow-ups", n), func() bool {
		out = out[:0]
		for _, s := range e.dc.Sent() {
			if s.Via == fakediscord.ViaFollowup {
				out = append(out, s)
			}
		}
		return len(out) >= n
	})
	return out
}

// runs counts the lines the approved shell command appended.
func (e *e2e) runs(t *testing.T) int { return gatewaytest.ShellRuns(t, e.workspace) }

func (e *e2e) inTeam(from fakediscord.User, text string) string {
	return e.dc.InjectMessage(fakediscord.Message{ChannelID: team, GuildID: guild, Author: from, Content: text})
}

func (e *e2e) mention() string { return "<@" + e.dc.Bot().ID + "> " }

func TestE2EDirectMessageTurnWithToolCall(t *testing.T) {
	e := startE2E(t)
	gatewaytest.PushSlowClockTurn(e.ai, "It is **noon** in UTC.", func() bool { return len(e.dc.Typing()) > 0 })
	ch := e.dc.DMChannel(guest.ID)
	e.dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: guest, Content: "what time is it?"})
	e.waitSent(t, ch, "It is **noon** in UTC.") // Discord Markdown passes through
	gatewaytest.CheckClockTurn(t, e.ai, "what time is it?")
	if len(e.dc.Typing()) == 0 {
		t.Fatal("no typing indicator during the turn")
	}
}

func TestE2EGuildAnswersOnlyWhenMentioned(t *testing.T) {
	e := startE2E(t)
	e.ai.Push(fakeoai.Text("Hello, team."))
	e.inTeam(guest, "chatting among ourselves")
	id := e.inTeam(guest, e.mention()+"say hello")
	got := e.waitSent(t, team, "Hello, team.")
	if got.Reference == nil || got.Reference.MessageID != id {
		t.Errorf("the answer does not reference the question: %+v", got.Reference)
	}
	reqs := e.ai.Requests()
	if len(reqs) != 1 || reqs[0].LastUser() != "say hello" {
		t.Fatalf("model saw %+v", reqs)
	}
}

func TestE2EApprovalButtons(t *testing.T) {
	e := startE2E(t)
	gatewaytest.PushShellTurn(e.ai)
	e.inTeam(guest, e.mention()+"add a line to ran.txt")
	req, token := e.waitRequest(t, team)
	e.waitSent(t, team, "I asked an approver to allow it.")

	// A non-approver's press is refused and runs nothing.
	e.dc.InjectButtonPress(fakediscord.Press{ChannelID: team, GuildID: guild, MessageID: req.ID, User: guest, CustomID: "gh:a:" + token})
	if f := e.waitFollowups(t, 1); f[0].Content != "not authorised" || f[0].Flags&fakediscord.FlagEphemeral == 0 {
		t.Fatalf("non-approver answer %+v", f[0])
	}
	if n := e.runs(t); n != 0 {
		t.Fatalf("ran %d times after a refused press", n)
	}
	if m, _ := e.dc.Message(req.ID); len(m.Components) == 0 {
		t.Fatal("a refused press removed the buttons")
	}

	// The approver double-presses: it runs once.
	for range 2 {
		e.dc.InjectButtonPress(fakediscord.Press{ChannelID: team, GuildID: guild, MessageID: req.ID, User: owner, CustomID: "gh:a:" + token})
	}
	f := e.waitFollowups(t, 3)[1:]
	outcomes := f[0].Content + " | " + f[1].Content
	if !strings.Contains(outcomes, "approved — running") || !strings.Contains(outcomes, "already approved") {
		t.Fatalf("double press outcomes: %s", outcomes)
	}
	e.waitSent(t, team, "It ran: ran.txt has a new line.")
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times, want exactly once", n)
	}
	testutil.WaitFor(t, "the request edited", func() bool {
		m, _ := e.dc.Message(req.ID)
		return len(m.Components) == 0 && strings.Contains(m.Content, "by discord:3001") && !strings.Contains(m.Content, "Reply /approve")
	})
	for _, r := range e.dc.InteractionResponses() {
		if r.Code != 0 || r.Type != fakediscord.CallbackDeferredUpdate {
			t.Errorf("press callback %+v: want an accepted deferred update", r)
		}
	}
}

func TestE2EApprovedFromTelegram(t *testing.T) {
	e := startE2E(t)
	gatewaytest.PushShellTurn(e.ai)
	e.inTeam(guest, e.mention()+"add a line to ran.txt")
	req, token := e.waitRequest(t, team)
	e.tg.InjectMessage(faketg.Message{From: &tgOwner, Chat: faketg.Chat{ID: tgOwner.ID, Type: "private"}, Text: "/approve " + token})
	e.waitSent(t, team, "It ran: ran.txt has a new line.")
	if n := e.runs(t); n != 1 {
		t.Fatalf("ran %d times", n)
	}
	testutil.WaitFor(t, "the Discord request shows the outcome", func() bool {
		m, _ := e.dc.Message(req.ID)
		return len(m.Components) == 0 && strings.Contains(m.Content, "by telegram:1001")
	})
}

func TestE2ESlashApprove(t *testing.T) {
	e := startE2E(t)
	testutil.WaitFor(t, "the slash commands", func() bool { return len(e.dc.Commands("")) == 3 })
	gatewaytest.PushShellTurn(e.ai)
	e.inTeam(guest, e.mention()+"add a line to ran.txt")
	_, token := e.waitRequest(t, team)
	in := e.dc.InjectSlashCommand(fakediscord.SlashCommand{ChannelID: team, GuildID: guild, User: owner, Name: "approve",
		Options: []fakediscord.OptionValue{{Name: "token", Type: 3, Value: token}}})
	e.waitSent(t, team, "It ran: ran.txt has a new line.")
	testutil.WaitFor(t, "the slash command answered", func() bool {
		for _, ed := range e.dc.Edits() {
			if ed.Interaction == in.ID && strings.Contains(strings.ToLower(ed.Content), "approved") {
				return true
			}
		}
		return false
	})
}

func TestE2EDroppedWebsocket(t *testing.T) {
	e := startE2E(t)
	e.ai.Push(fakeoai.Text("first"), fakeoai.Text("second"))
	ch := e.dc.DMChannel(guest.ID)
	e.dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: guest, Content: "one"})
	e.waitSent(t, ch, "first")
	before := len(e.dc.Identifies()) + len(e.dc.Resumes())
	e.dc.DropConnection()
	testutil.WaitFor(t, "the session back", func() bool {
		return len(e.dc.Identifies())+len(e.dc.Resumes()) > before && e.dc.Connected() == 1
	})
	e.dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: guest, Content: "two"})
	e.waitSent(t, ch, "second")
}

func TestE2EStrangerToldIdentity(t *testing.T) {
	e := startE2E(t)
	ch := e.dc.DMChannel(stranger.ID)
	e.dc.InjectMessage(fakediscord.Message{ChannelID: ch, Author: stranger, Content: "hello?"})
	e.waitSent(t, ch, "Your identity is discord:3003")
	if n := len(e.ai.Requests()); n != 0 {
		t.Fatalf("a stranger's message reached the model (%d requests)", n)
	}
}
