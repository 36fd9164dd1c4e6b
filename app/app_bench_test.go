package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// benchGateway hands the benchmark its inbox and signals each reply. It
// poses as telegram (without the Telegram API) so that the configured
// allow list applies.
type benchGateway struct {
	inbox   chan gateways.Inbox
	replies chan string
}

func (g *benchGateway) Name() string { return "telegram" }

func (g *benchGateway) Run(ctx context.Context, inbox gateways.Inbox) error {
	g.inbox <- inbox
	<-ctx.Done()
	return nil
}

func (g *benchGateway) Act(_ context.Context, a core.Action) (core.Result, error) {
	g.replies <- a.Text
	return core.Result{}, nil
}

// startBench runs a whole gatehouse (SQLite store, built-in tools, gates,
// broker) against the fake OpenAI server, with one bench gateway.
func startBench(b *testing.B) (*benchGateway, *fakeoai.Server, gateways.Inbox) {
	b.Helper()
	ai := fakeoai.New()
	b.Cleanup(ai.Close)
	dir := b.TempDir()
	yaml := fmt.Sprintf(`
llm: {providers: [{name: fake, base_url: %q, api_key: sk-bench, model: bench}]}
gateways: {console: {enabled: false}, telegram: {allow: ["*"]}}
hitl: {approvers: ["telegram:1"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
`, ai.URL(), filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
	cfg, err := config.Parse([]byte(yaml), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		b.Fatal(err)
	}
	gw := &benchGateway{inbox: make(chan gateways.Inbox, 1), replies: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{Config: cfg, Log: zerolog.Nop(), Secrets: secrets.New("sk-bench"),
		Gateways: []gateways.Gateway{gw}})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }() //nolint:errcheck // ends with ctx
	b.Cleanup(func() { cancel(); <-done; a.Close() })
	return gw, ai, <-gw.inbox
}

// BenchmarkOneLineQuestion sends a one-line question through the whole bot
// and reports, besides time and allocations (both sides of the loopback
// HTTP included), how many bytes the LLM receives for it.
func BenchmarkOneLineQuestion(b *testing.B) {
	gw, ai, inbox := startBench(b)
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		i++
		// A new conversation each time, so the request holds only the
		// system prompt, the tools and the question.
		s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "telegram", Chat: fmt.Sprint(i)},
			From: "telegram:1", Text: "What time is it in Tokyo?"}
		if err := inbox.Submit(ctx, s); err != nil {
			b.Fatal(err)
		}
		<-gw.replies
	}
	b.StopTimer()
	b.ReportMetric(float64(ai.BytesReceived())/float64(i), "llm-bytes/msg")
}
