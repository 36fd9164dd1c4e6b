package core_test

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/core/tools"
)

// instant is an in-process provider that answers at once, so the benchmark
// measures the core's own per-message cost.
type instant struct{}

func (instant) Name() string { return "instant" }

func (instant) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "ok"}, Provider: "instant"}, nil
}

// sink is a gateway that signals each reply.
type sink chan struct{}

func (s sink) Act(context.Context, core.Action) (core.Result, error) {
	s <- struct{}{}
	return core.Result{}, nil
}

// BenchmarkEngineMessage measures one chat message through Perceive →
// Reason → Act with an instant model and the built-in tools offered: the
// engine, gates, history and logging (to io.Discard at info level).
func BenchmarkEngineMessage(b *testing.B) {
	reg := tools.NewRegistry(tools.Options{})
	if err := tools.RegisterBuiltins(reg, tools.BuiltinOptions{Workspace: b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	out := make(sink, 1)
	eng, err := core.NewEngine(core.Config{
		Provider: instant{},
		Tools:    reg,
		Gates:    []core.Gate{core.SecretGate{}, &core.PolicyGate{Catalog: reg}},
		Auth:     core.NewAuth(map[string][]string{"bench": {"*"}}, nil),
		Log:      zerolog.New(discard{}).Level(zerolog.InfoLevel),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Register("bench", out); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go eng.Run(ctx) //nolint:errcheck // ends with ctx
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "bench", Chat: "1"}, From: "bench:1", Text: "what time is it?"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := eng.Submit(ctx, s); err != nil {
			b.Fatal(err)
		}
		<-out
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
