package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// recordingGateway poses as telegram (open to everybody) and keeps every
// reply it is asked to send.
type recordingGateway struct {
	inbox chan gateways.Inbox
	mu    sync.Mutex
	sent  []core.Action
}

func (g *recordingGateway) Name() string { return "telegram" }

func (g *recordingGateway) Run(ctx context.Context, inbox gateways.Inbox) error {
	g.inbox <- inbox
	<-ctx.Done()
	return nil
}

func (g *recordingGateway) Act(_ context.Context, a core.Action) (core.Result, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sent = append(g.sent, a)
	return core.Result{}, nil
}

// to returns the texts sent to the chat, in order.
func (g *recordingGateway) to(chat string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, a := range g.sent {
		if a.Conv.Chat == chat {
			out = append(out, a.Text)
		}
	}
	return out
}

// budgetBot is a wired gatehouse on a settable clock, with the fake
// OpenAI as its provider and a recording gateway; telegram:ops is the
// notify conversation.
type budgetBot struct {
	t     *testing.T
	clock *storetest.Clock
	ai    *fakeoai.Server
	gw    *recordingGateway
	inbox gateways.Inbox
}

// startBudgetBot starts the bot at the time at; price is added to the
// provider, budget is the budget section.
func startBudgetBot(t *testing.T, price, budget string, at time.Time) *budgetBot {
	t.Helper()
	ai := fakeoai.Start(t)
	ai.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("an answer") })
	dir := t.TempDir()
	yaml := fmt.Sprintf(`
llm: {providers: [{name: fake, base_url: %q, model: fake-model%s}]}
budget: %s
gateways: {console: {enabled: false}, telegram: {allow: ["*"]}}
hitl: {approvers: ["telegram:ops"], notify: ["telegram:ops"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
`, ai.URL(), price, budget, filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	b := &budgetBot{t: t, clock: storetest.NewClock(at), ai: ai, gw: &recordingGateway{inbox: make(chan gateways.Inbox, 1)}}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{Config: cfg, Log: zerolog.Nop(), Secrets: secrets.New(),
		Gateways: []gateways.Gateway{b.gw}, Now: b.clock.Now})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }() //nolint:errcheck // ends with ctx
	t.Cleanup(func() { cancel(); <-done; a.Close() })
	b.inbox = <-b.gw.inbox
	return b
}

// say sends text in telegram:chat and waits for the answer, which it returns.
func (b *budgetBot) say(chat, text string) string {
	b.t.Helper()
	n := len(b.gw.to(chat))
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "telegram", Chat: chat},
		From: "telegram:1", Text: text}
	if err := b.inbox.Submit(context.Background(), s); err != nil {
		b.t.Fatal(err)
	}
	testutil.WaitFor(b.t, "the answer to "+text, func() bool { return len(b.gw.to(chat)) > n })
	return b.gw.to(chat)[n]
}

// wantRequests checks how many requests the model has had.
func (b *budgetBot) wantRequests(n int) {
	b.t.Helper()
	if got := len(b.ai.Requests()); got != n {
		b.t.Fatalf("the model had %d requests, want %d", got, n)
	}
}

func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s = %q; want it to contain %q", what, got, w)
		}
	}
}

// TestConversationBudget: once a conversation's tokens today reach
// budget.conversation_daily_tokens, its next turn is refused without a
// request to the model; the user is told the cap, its size, today's usage
// and when it resets; hitl.notify hears once that day; /status shows the
// usage; another conversation is not capped; at 00:00 UTC it resets, and
// the notify conversation hears again on the new day.
func TestConversationBudget(t *testing.T) {
	day1 := time.Date(2026, 3, 1, 22, 30, 0, 0, time.UTC)
	b := startBudgetBot(t, "", "{conversation_daily_tokens: 100}", day1)
	if got := b.say("1", "hello"); got != "an answer" {
		t.Fatalf("first turn answered %q", got)
	}
	b.wantRequests(1)
	refusal := b.say("1", "and again")
	b.wantRequests(1)
	wantContains(t, "refusal", refusal, "budget.conversation_daily_tokens = 100 tokens", "used today: ",
		"resets at 00:00 UTC (in 1h30m)", "this conversation")
	if got := b.say("1", "please"); !strings.Contains(got, "budget.conversation_daily_tokens") {
		t.Errorf("third message answered %q; want the refusal again", got)
	}
	b.wantRequests(1)
	notices := b.gw.to("ops")
	if len(notices) != 1 {
		t.Fatalf("notify conversation got %d messages, want 1 notice: %q", len(notices), notices)
	}
	wantContains(t, "notice", notices[0], "Budget reached", "budget.conversation_daily_tokens = 100 tokens", "telegram:1")
	status := b.say("1", "/status")
	wantContains(t, "/status", status, "Usage today (UTC): this conversation ", " of 100 tokens; all conversations ")
	b.wantRequests(1)
	if got := b.say("2", "hello from another chat"); got != "an answer" {
		t.Errorf("another conversation answered %q; its own budget is untouched", got)
	}
	b.wantRequests(2)

	b.clock.Set(time.Date(2026, 3, 2, 0, 0, 1, 0, time.UTC))
	if got := b.say("1", "a new day"); got != "an answer" {
		t.Fatalf("after 00:00 UTC answered %q; want the budget reset", got)
	}
	b.wantRequests(3)
	refusal = b.say("1", "over again")
	wantContains(t, "refusal on day 2", refusal, "resets at 00:00 UTC (in 23h59m)")
	b.wantRequests(3)
	if n := len(b.gw.to("ops")); n != 2 {
		t.Errorf("notify conversation got %d messages after day 2's cap, want 2 (one a day)", n)
	}
}

// TestSharedBudgets: budget.daily_tokens counts all conversations together
// and budget.daily_usd counts their cost at the provider's price; /status
// shows the cost.
func TestSharedBudgets(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, price, budget string
		wants               []string
		status              string
	}{
		{"daily_tokens", "", "{daily_tokens: 100}",
			[]string{"budget.daily_tokens = 100 tokens", "all conversations", "in 12h"}, "all conversations "},
		{"daily_usd", ", price: {input_per_mtok: 10000, output_per_mtok: 20000}", "{daily_usd: 1}",
			[]string{"budget.daily_usd = $1.00", "spending", "used today: $"}, "Cost today (UTC): $"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := startBudgetBot(t, tt.price, tt.budget, at)
			b.say("1", "hello")
			refusal := b.say("2", "hello from elsewhere")
			b.wantRequests(1)
			wantContains(t, "refusal", refusal, tt.wants...)
			b.say("3", "and from a third")
			if n := len(b.gw.to("ops")); n != 1 {
				t.Errorf("notify conversation got %d messages, want 1 (once a day for a shared cap)", n)
			}
			wantContains(t, "/status", b.say("1", "/status"), tt.status)
			b.wantRequests(1)
		})
	}
}
