package app_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// failoverBot is a wired gatehouse whose first provider always fails (a
// 500) and whose second, streaming, answers; its configuration file can be
// rewritten and reloaded.
type failoverBot struct {
	*budgetBot
	app  *app.App
	mu   sync.Mutex
	yaml string
	dir  string
	urls [2]string
}

// failoverYAML is the configuration with the two providers' prices (per
// million tokens, input and output alike) and the budget section.
func (b *failoverBot) failoverYAML(firstPrice, secondPrice, budget string) string {
	return fmt.Sprintf(`
llm: {providers: [
  {name: first, base_url: %[1]q, model: m, price: {input_per_mtok: %[3]s, output_per_mtok: %[3]s}},
  {name: second, base_url: %[2]q, model: m, stream: true, price: {input_per_mtok: %[4]s, output_per_mtok: %[4]s}}]}
budget: %[5]s
gateways: {console: {enabled: false}, telegram: {allow: ["*"]}}
hitl: {approvers: ["telegram:ops"], notify: ["telegram:ops"]}
tools: {workspace: %[6]q}
store: {dsn: %[7]q}
http: {listen: ""}
`, b.urls[0], b.urls[1], firstPrice, secondPrice, budget, filepath.Join(b.dir, "ws"), filepath.Join(b.dir, "gatehouse.db"))
}

func startFailoverBot(t *testing.T, firstPrice, secondPrice, budget string) *failoverBot {
	t.Helper()
	first, second := fakeoai.Start(t), fakeoai.Start(t)
	first.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Status(http.StatusInternalServerError, 0) })
	second.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("an answer") })
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b := &failoverBot{
		budgetBot: &budgetBot{t: t, clock: storetest.NewClock(at), ai: second, gw: &recordingGateway{inbox: make(chan gateways.Inbox, 1)}},
		dir:       t.TempDir(), urls: [2]string{first.URL(), second.URL()},
	}
	b.yaml = b.failoverYAML(firstPrice, secondPrice, budget)
	load := func() (*config.Config, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return config.Parse([]byte(b.yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.app, err = app.New(ctx, app.Options{Config: cfg, Log: zerolog.Nop(), Secrets: secrets.New(),
		Gateways: []gateways.Gateway{b.gw}, Now: b.clock.Now, Load: load})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { b.app.Run(ctx); close(done) }() //nolint:errcheck // ends with ctx
	t.Cleanup(func() { cancel(); <-done; b.app.Close() })
	b.inbox = <-b.gw.inbox
	return b
}

// statusRe reads /status: all conversations' tokens today and their cost.
var statusRe = regexp.MustCompile(`all conversations (\d+)[^\n]*\nCost today \(UTC\): \$([0-9.]+)`)

// status returns today's tokens and cost as /status shows them.
func (b *failoverBot) status() (tokens int, cost string) {
	b.t.Helper()
	got := b.say("status", "/status")
	m := statusRe.FindStringSubmatch(got)
	if m == nil {
		b.t.Fatalf("/status = %q; want the tokens and the cost of today", got)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		b.t.Fatal(err)
	}
	return n, m[2]
}

// TestFailoverIsPricedAtTheProviderThatAnswered: a request the first
// provider fails and the second answers (streaming, its usage in the last
// chunk) costs the second's price, not the first's: /status shows it and
// budget.daily_usd counts it.
func TestFailoverIsPricedAtTheProviderThatAnswered(t *testing.T) {
	// $1 a token at the first, a cent a token at the second; the cap is
	// reached after one turn at the first's price, not at the second's.
	b := startFailoverBot(t, "1000000", "10000", "{daily_usd: 10}")
	if got := b.say("1", "hello"); got != "an answer" {
		t.Fatalf("first turn answered %q", got)
	}
	tokens, cost := b.status()
	if want := fmt.Sprintf("%.2f", float64(tokens)/100); tokens < 10 || cost != want {
		t.Errorf("/status: %d tokens cost $%s; want $%s (the second's price, a cent a token)", tokens, cost, want)
	}
	if got := b.say("1", "again"); got != "an answer" {
		t.Errorf("second turn answered %q; the cap is not reached at the second's price", got)
	}
	b.wantRequests(2)
}

// TestReloadPricesTheNextRequest: a reload that changes the second
// provider's price prices the next request it answers at the new price;
// what was recorded before keeps its cost; the cap counts both.
func TestReloadPricesTheNextRequest(t *testing.T) {
	b := startFailoverBot(t, "0", "10000", "{daily_usd: 10}") // the first is free, the second a cent a token
	b.say("1", "hello")
	tokens1, cost1 := b.status()
	if want := fmt.Sprintf("%.2f", float64(tokens1)/100); tokens1 < 10 || cost1 != want {
		t.Fatalf("/status before the reload: %d tokens cost $%s; want $%s", tokens1, cost1, want)
	}
	b.mu.Lock()
	b.yaml = b.failoverYAML("0", "1000000", "{daily_usd: 10}") // now $1 a token
	b.mu.Unlock()
	if err := b.app.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.say("1", "after the reload"); got != "an answer" {
		t.Fatalf("turn after the reload answered %q", got)
	}
	tokens2, cost2 := b.status()
	if want := fmt.Sprintf("%.2f", float64(tokens1)/100+float64(tokens2-tokens1)); cost2 != want {
		t.Errorf("/status after the reload: %d tokens cost $%s; want $%s (the earlier at a cent, the new at $1 a token)", tokens2, cost2, want)
	}
	wantContains(t, "the turn over the cap", b.say("1", "and more"), "budget.daily_usd")
	b.wantRequests(2)
}

// TestReloadRenamedProviderKeepsItsPrice: a reload that renames a provider
// (and prices the new name higher) leaves the running provider answering
// under its old name until a restart: its requests still cost its running
// price, never nothing and never the new name's.
func TestReloadRenamedProviderKeepsItsPrice(t *testing.T) {
	b := startFailoverBot(t, "0", "10000", "{daily_usd: 10}") // the second costs a cent a token
	b.say("1", "hello")
	tokens1, _ := b.status()
	b.mu.Lock()
	b.yaml = strings.Replace(b.failoverYAML("0", "1000000", "{daily_usd: 10}"), "name: second", "name: renamed", 1)
	b.mu.Unlock()
	if err := b.app.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.say("1", "after the rename"); got != "an answer" {
		t.Fatalf("turn after the reload answered %q", got)
	}
	tokens2, cost2 := b.status()
	if want := fmt.Sprintf("%.2f", float64(tokens2)/100); tokens2 <= tokens1 || cost2 != want {
		t.Errorf("/status after the rename: %d tokens cost $%s; want $%s (a cent a token, the running price)", tokens2, cost2, want)
	}
}

// TestReloadRefusesAnUnpricedRunningProviderUnderDailyUSD: with
// budget.daily_usd in the new file, a running provider that has no price
// and that the file no longer names (renamed) would spend unseen by the
// cap: the reload is rejected, naming the key, and the running budget is
// kept.
func TestReloadRefusesAnUnpricedRunningProviderUnderDailyUSD(t *testing.T) {
	b := startFailoverBot(t, "0", "10000", "{}")
	unpriced := strings.Replace(b.failoverYAML("0", "0", "{}"),
		", price: {input_per_mtok: 0, output_per_mtok: 0}}]}", "}]}", 1)
	if !strings.Contains(unpriced, "stream: true}]}") {
		t.Fatalf("the second provider's price was not removed:\n%s", unpriced)
	}
	b.mu.Lock()
	b.yaml = unpriced
	b.mu.Unlock()
	if err := b.app.Reload(context.Background()); err != nil {
		t.Fatal(err) // no daily_usd: a provider may go without a price
	}
	b.mu.Lock()
	b.yaml = strings.Replace(b.failoverYAML("0", "1000000", "{daily_usd: 0.000001}"), "name: second", "name: renamed", 1)
	b.mu.Unlock()
	err := b.app.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "budget.daily_usd") || !strings.Contains(err.Error(), `"second"`) {
		t.Fatalf("reload = %v; want it rejected naming budget.daily_usd and the running provider", err)
	}
	for _, text := range []string{"hello", "again"} {
		if got := b.say("1", text); got != "an answer" {
			t.Errorf("%q answered %q; the rejected reload's daily_usd applies", text, got)
		}
	}
}
