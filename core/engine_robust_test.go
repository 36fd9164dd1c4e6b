package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func TestEscapedArgumentsCannotDodgeDenyRule(t *testing.T) {
	ran := false
	sh := testTool{name: "sh", run: func(context.Context, json.RawMessage) (string, error) {
		ran = true
		return "", nil
	}}
	h := newHarness(t, harnessOpts{
		extraTools: toolList(sh),
		rules: []core.Rule{
			{Tool: "sh", Args: regexpMust(`rm -rf`), Decision: core.Deny},
			{Tool: "*", Decision: core.Allow},
		},
	})
	h.fake().Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "x", Name: "sh", Args: `{"text":"rm \u002drf /"}`}),
		fakeoai.Text("refused"),
	)
	h.say(t, "c1", "clean up")
	h.gw.next(t)
	if ran {
		t.Fatal(`an escaped "rm \u002drf" slipped past the deny rule`)
	}
	if m := lastMessage(t, h.fake(), 1); !strings.Contains(m.Content, "policy forbids") {
		t.Fatalf("tool message = %+v", m)
	}
}

func TestDeniedProposalsAreRejectionsNotFailures(t *testing.T) {
	wipe := testTool{name: "wipe", run: func(context.Context, json.RawMessage) (string, error) { return "", nil }}
	h := newHarness(t, harnessOpts{extraTools: toolList(wipe), rules: []core.Rule{{Tool: "wipe", Decision: core.Deny}}})
	h.fake().Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "w1", Name: "wipe", Args: `{}`}),
		fakeoai.ToolCalls(fakeoai.Call{ID: "w2", Name: "wipe", Args: `{}`}),
		fakeoai.ToolCalls(fakeoai.Call{ID: "e", Name: "echo", Args: `{"text":"fine"}`}),
		fakeoai.Text("done the allowed way"),
	)
	h.say(t, "c1", "go")
	if got := h.gw.next(t); got.Text != "done the allowed way" {
		t.Fatalf("reply = %q: two refusals must not end the turn", got.Text)
	}
	// A third refusal in a row does end it.
	h.fake().Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "w3", Name: "wipe", Args: `{}`}),
		fakeoai.ToolCalls(fakeoai.Call{ID: "w4", Name: "wipe", Args: `{}`}),
		fakeoai.ToolCalls(fakeoai.Call{ID: "w5", Name: "wipe", Args: `{}`}),
	)
	h.say(t, "c1", "wipe, wipe, wipe")
	if got := h.gw.next(t); !strings.Contains(got.Text, "refused my proposals 3 times") {
		t.Fatalf("reply = %q", got.Text)
	}
}

func TestEmptyAnswerIsNotSilence(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fake().Push(fakeoai.Text(""))
	h.say(t, "c1", "hello?")
	if got := h.gw.next(t); !strings.Contains(got.Text, "empty answer") {
		t.Fatalf("reply = %q", got.Text)
	}
}

func TestInfrastructureErrorsAreNotShownRaw(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fake().Push(fakeoai.Status(503, 0).WithMessage("upstream 10.1.2.3:8443 resolver 10.255.255.53 failed"))
	h.say(t, "c1", "hi")
	got := h.gw.next(t)
	if strings.Contains(got.Text, "10.") || !strings.Contains(got.Text, "unreachable") {
		t.Fatalf("reply = %q", got.Text)
	}
}

func TestHistoryKeepsNoSecretFromToolCalls(t *testing.T) {
	const secret = "hist-secret-987654"
	h := newHarness(t, harnessOpts{secrets: secrets.New(secret)})
	h.fake().Push(
		fakeoai.ToolCalls(fakeoai.Call{ID: "e", Name: "echo", Args: `{"text":"` + secret + `"}`}),
		fakeoai.Text("ok"),
	)
	h.say(t, "c1", "go")
	h.gw.next(t)
	for _, m := range h.fake().Requests()[1].Messages {
		for _, c := range m.ToolCalls {
			if strings.Contains(c.Args, secret) {
				t.Fatalf("history sent back a tool call carrying the secret: %+v", c)
			}
		}
		if strings.Contains(m.Content, secret) {
			t.Fatalf("history sent back the secret: %+v", m)
		}
	}
}

// panicky is a gateway whose first Act panics.
type panicky struct {
	calls atomic.Int32
	ok    chan string
}

func (p *panicky) Act(_ context.Context, a core.Action) (core.Result, error) {
	if p.calls.Add(1) == 1 {
		panic("gateway boom")
	}
	p.ok <- a.Text
	return core.Result{}, nil
}

func TestPanickingGatewayDoesNotKillTheProcess(t *testing.T) {
	gw := &panicky{ok: make(chan string, 10)}
	logs := &syncLog{}
	eng := runEngine(t, core.Config{Provider: instantText("fine"), Log: zerolog.New(logs)}, "pg", gw)
	for range 2 {
		s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "pg", Chat: "1"}, From: "pg:1", Text: "hi"}
		if err := eng.Submit(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-gw.ok:
		if got != "fine" {
			t.Fatalf("reply = %q", got)
		}
	case <-time.After(waitFor):
		t.Fatal("no reply after the gateway panicked once")
	}
	if !strings.Contains(logs.String(), "gateway boom") {
		t.Error("panic not logged")
	}
}

func TestDoneCalledAfterHandling(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fake().Push(fakeoai.Text("answer"))
	done := make(chan struct{})
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "d"}, From: "test:alice",
		Text: "hi", Done: func() { close(done) }}
	if err := h.eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	h.gw.next(t)
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatal("Done not called")
	}
}

// TestNoTurnAfterRunReturns submits while the engine stops: nothing may
// reach the model once Run has returned (run with -race).
func TestNoTurnAfterRunReturns(t *testing.T) {
	var stopped atomic.Bool
	late := atomic.Int32{}
	prov := providerFunc(func(context.Context, llm.Request) (llm.Response, error) {
		if stopped.Load() {
			late.Add(1)
		}
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "ok"}}, nil
	})
	eng := buildEngine(t, core.Config{Provider: prov, Log: zerolog.Nop()}, "s", nowhere())
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { eng.Run(ctx); stopped.Store(true); close(ran) }() //nolint:errcheck // returns nil
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "s", Chat: string(rune('a' + i))},
					From: "s:1", Text: string(rune('0' + j%10))}
				if eng.Submit(context.Background(), s) != nil {
					return
				}
			}
		}()
	}
	cancel()
	wg.Wait()
	<-ran
	if n := late.Load(); n != 0 {
		t.Fatalf("%d turns reached the model after Run returned", n)
	}
}

type providerFunc func(context.Context, llm.Request) (llm.Response, error)

func (f providerFunc) Name() string { return "func" }
func (f providerFunc) Complete(ctx context.Context, r llm.Request) (llm.Response, error) {
	return f(ctx, r)
}

func instantText(text string) llm.Provider {
	return providerFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: text}}, nil
	})
}

type syncLog = testutil.SyncBuffer

// buildEngine builds an engine on cfg with, unless cfg sets them, an empty
// tool registry, a gateway open to everyone, and no logging; a is the
// gateway's actuator.
func buildEngine(t *testing.T, cfg core.Config, gateway string, a core.Actuator) *core.Engine {
	t.Helper()
	if cfg.Tools == nil {
		cfg.Tools = tools.NewRegistry(tools.Options{})
	}
	if cfg.Auth == nil {
		cfg.Auth = core.NewAuth(map[string][]string{gateway: {"*"}}, nil)
	}
	eng, err := core.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Register(gateway, a); err != nil {
		t.Fatal(err)
	}
	return eng
}

// runEngine builds an engine (buildEngine) and runs it for the test.
func runEngine(t *testing.T, cfg core.Config, gateway string, a core.Actuator) *core.Engine {
	t.Helper()
	eng := buildEngine(t, cfg, gateway, a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { eng.Run(ctx); close(done) }() //nolint:errcheck // returns nil
	t.Cleanup(func() { cancel(); <-done })
	return eng
}

// nowhere returns a gateway that accepts every reply.
func nowhere() core.Actuator {
	return core.ActuatorFunc(func(context.Context, core.Action) (core.Result, error) { return core.Result{}, nil })
}

func TestAuthAllowsThreadsOfAnAllowedChat(t *testing.T) {
	a := core.NewAuth(map[string][]string{"telegram": {"telegram:-100123"}}, nil)
	for _, c := range []core.Conversation{{Gateway: "telegram", Chat: "-100123"}, {Gateway: "telegram", Chat: "-100123", Thread: "7"}} {
		if !a.Allowed(core.Signal{Conv: c, From: "telegram:55"}) {
			t.Errorf("%s refused", c.Key())
		}
	}
	if a.Allowed(core.Signal{Conv: core.Conversation{Gateway: "telegram", Chat: "-100999"}, From: "telegram:55"}) {
		t.Error("another chat allowed")
	}
}

func regexpMust(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }

// TestSignalWaitingForSlotIsDroppedAtShutdown: with one slot busy past the
// grace period, a signal still waiting for it never reaches the model and
// is not marked Done (so its gateway gets it again after a restart).
func TestSignalWaitingForSlotIsDroppedAtShutdown(t *testing.T) {
	var calls []string
	var mu sync.Mutex
	entered := make(chan struct{}, 2)
	prov := providerFunc(func(ctx context.Context, r llm.Request) (llm.Response, error) {
		mu.Lock()
		calls = append(calls, r.Messages[len(r.Messages)-1].Content)
		mu.Unlock()
		entered <- struct{}{}
		<-ctx.Done() // hold the only slot until the grace is over
		return llm.Response{}, ctx.Err()
	})
	eng := buildEngine(t, core.Config{Provider: prov, Concurrency: 1, Grace: time.Millisecond, Log: zerolog.Nop()}, "s", nowhere())
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { eng.Run(ctx); close(ran) }() //nolint:errcheck // returns nil
	var bDone atomic.Bool
	submit := func(chat string, done func()) {
		s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "s", Chat: chat}, From: "s:1", Text: chat, Done: done}
		if err := eng.Submit(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	submit("A", nil)
	<-entered // A holds the slot
	submit("B", func() { bDone.Store(true) })
	cancel()
	<-ran
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 || calls[0] != "A" {
		t.Fatalf("model saw %q, want only A", calls)
	}
	if bDone.Load() {
		t.Fatal("B was marked done without being processed")
	}
}

// TestTurnCutByShutdownIsNoError: a turn still running when the grace
// period ends is cancelled; that is the expected end of a shutdown, logged
// at info, not a "turn failed" error, and the user is not told.
func TestTurnCutByShutdownIsNoError(t *testing.T) {
	entered := make(chan struct{}, 1)
	prov := providerFunc(func(ctx context.Context, r llm.Request) (llm.Response, error) {
		entered <- struct{}{}
		<-ctx.Done()
		return llm.Response{}, fmt.Errorf("fake: %w", ctx.Err())
	})
	logs := &testutil.SyncBuffer{}
	var replies atomic.Int32
	gw := core.ActuatorFunc(func(context.Context, core.Action) (core.Result, error) {
		replies.Add(1)
		return core.Result{}, nil
	})
	eng := buildEngine(t, core.Config{Provider: prov, Grace: time.Millisecond, Log: zerolog.New(logs)}, "s", gw)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { eng.Run(ctx); close(ran) }() //nolint:errcheck // returns nil
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "s", Chat: "A"}, From: "s:1", Text: "slow"}
	if err := eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	<-entered
	cancel()
	<-ran
	if strings.Contains(logs.String(), `"level":"error"`) {
		t.Fatalf("a turn cut by shutdown logged an error:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "turn cut short by shutdown") {
		t.Fatalf("the cut turn is not logged:\n%s", logs)
	}
	if n := replies.Load(); n != 0 {
		t.Fatalf("the user was sent %d replies about a turn cut by shutdown", n)
	}
}

// TestPanickingDoneDoesNotKillTheProcess: Done is the gateway's code (it
// acknowledges the message on the platform); a panic in it, after a turn
// or a command, is logged like a panicking Act, and the engine goes on
// and still becomes idle.
func TestPanickingDoneDoesNotKillTheProcess(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fake().Push(fakeoai.Text("first"), fakeoai.Text("second"))
	for _, text := range []string{"hi", "/help"} {
		s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: "d"}, From: "test:alice",
			Text: text, Done: func() { panic("ack boom") }}
		if err := h.eng.Submit(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		h.gw.next(t)
	}
	h.say(t, "d", "still there?")
	if got := h.gw.next(t).Text; got != "second" {
		t.Fatalf("reply after the panicking Done = %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := h.eng.WaitIdle(ctx); err != nil {
		t.Fatalf("engine not idle after a panicking Done: %v", err)
	}
	if !strings.Contains(h.log.String(), "ack boom") {
		t.Error("the panic in Done was not logged")
	}
}
