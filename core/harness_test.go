package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// waitFor bounds how long a test waits for something that should happen;
// it is a hang guard, not a timing assertion.
const waitFor = 10 * time.Second

// recorder is a test gateway: it records every reply it is asked to send.
type recorder struct {
	mu      sync.Mutex
	replies []core.Action
	ch      chan core.Action
}

func newRecorder() *recorder { return &recorder{ch: make(chan core.Action, 1000)} }

func (r *recorder) Act(_ context.Context, a core.Action) (core.Result, error) {
	r.mu.Lock()
	r.replies = append(r.replies, a)
	r.mu.Unlock()
	r.ch <- a
	return core.Result{}, nil
}

// next returns the next reply, failing the test if none comes.
func (r *recorder) next(t *testing.T) core.Action {
	t.Helper()
	select {
	case a := <-r.ch:
		return a
	case <-time.After(waitFor):
		t.Fatal("no reply")
		return core.Action{}
	}
}

// testTool is a tool whose behaviour a test supplies.
type testTool struct {
	name     string
	readOnly bool
	run      func(ctx context.Context, args json.RawMessage) (string, error)
}

func (t testTool) Spec() tools.Spec {
	return tools.Spec{Name: t.name, Description: "test tool " + t.name, ReadOnly: t.readOnly,
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}
}

func (t testTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	return t.run(ctx, args)
}

// toolList lists testTools as tools.Tool values.
func toolList(ts ...testTool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

// echoTool returns its "text" argument.
func echoTool() testTool {
	return testTool{name: "echo", readOnly: true, run: func(_ context.Context, args json.RawMessage) (string, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		return "echo: " + a.Text, nil
	}}
}

// harness is an Engine wired to fake OpenAI servers, a recording gateway
// named "test", and a tool registry.
type harness struct {
	eng   *core.Engine
	gw    *recorder
	lives *liveGateway // with harnessOpts.live
	fakes []*fakeoai.Server
	log   *testutil.SyncBuffer
}

type harnessOpts struct {
	fakes        int // OpenAI fakes in the cascade; default 1
	timeout      time.Duration
	maxSteps     int
	rules        []core.Rule
	extraTools   []tools.Tool
	holder       core.Holder
	commands     core.CommandHandler
	secrets      *secrets.Set
	allow        []string
	concurrency  int
	maxToolCalls int
	maxMessage   int
	schedules    core.ScheduleLister
	budget       core.Budget
	budgetNotify []core.Conversation
	history      core.History
	undo         core.Undoer
	stream       bool // the providers stream
	live         bool // the test gateway shows replies live (h.lives)
	usage        core.UsageRecorder
	metrics      *metrics.Registry
	vision       []bool // per fake: the provider takes images
	attachments  core.AttachmentReceiver
	profiles     *core.Profiles // the engine's and its policy gate's
	journal      core.Journal
	auth         *core.Auth // nil: the test gateway's allow list (allow) and test:boss
	// wrap, when set, is the gateway registered instead of the recorder:
	// it wraps it (h.gw still sees every reply it passes on).
	wrap func(*recorder) core.Actuator
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	h := &harness{gw: newRecorder(), log: &testutil.SyncBuffer{}}
	log := zerolog.New(h.log)
	if o.fakes == 0 {
		o.fakes = 1
	}
	var providers []llm.Provider
	for i := range o.fakes {
		f := fakeoai.Start(t)
		h.fakes = append(h.fakes, f)
		p, err := llm.NewOpenAI(llm.OpenAIConfig{Name: "p" + string(rune('1'+i)), BaseURL: f.URL(),
			APIKey: "test-key-123456", Model: "test-model", Timeout: o.timeout, Stream: o.stream,
			Vision: i < len(o.vision) && o.vision[i]})
		if err != nil {
			t.Fatal(err)
		}
		providers = append(providers, p)
	}
	reg := tools.NewRegistry(tools.Options{Log: log, Secrets: o.secrets})
	for _, tl := range append([]tools.Tool{echoTool()}, o.extraTools...) {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	allow := o.allow
	if allow == nil {
		allow = []string{"*"}
	}
	auth := o.auth
	if auth == nil {
		auth = core.NewAuth(map[string][]string{"test": allow}, []core.Identity{"test:boss"})
	}
	eng, err := core.NewEngine(core.Config{
		Provider:     llm.NewCascade(log, providers...),
		Tools:        reg,
		Gates:        []core.Gate{core.SecretGate{Secrets: o.secrets}, &core.PolicyGate{Rules: o.rules, Catalog: reg, Profiles: o.profiles}},
		Auth:         auth,
		Holder:       o.holder,
		Commands:     o.commands,
		Schedules:    o.schedules,
		Redact:       o.secrets.Redact,
		MaxSteps:     o.maxSteps,
		MaxToolCalls: o.maxToolCalls,
		MaxMessage:   o.maxMessage,
		Concurrency:  o.concurrency,
		Model:        "test-model",
		Budget:       o.budget,
		BudgetNotify: o.budgetNotify,
		History:      o.history,
		Undo:         o.undo,
		Usage:        o.usage,
		Metrics:      o.metrics,
		Attachments:  o.attachments,
		Profiles:     o.profiles,
		Journal:      o.journal,
		Log:          log,
	})
	if err != nil {
		t.Fatal(err)
	}
	var gw core.Actuator = h.gw
	if o.live {
		h.lives = &liveGateway{recorder: h.gw}
		gw = h.lives
	}
	if o.wrap != nil {
		gw = o.wrap(h.gw)
	}
	if err := eng.Register("test", gw); err != nil {
		t.Fatal(err)
	}
	if err := eng.Register(core.ToolActuator, reg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("engine run: %v", err)
		}
	})
	h.eng = eng
	return h
}

// fake returns the first OpenAI fake.
func (h *harness) fake() *fakeoai.Server { return h.fakes[0] }

// say submits a message from test:alice in chat c.
func (h *harness) say(t *testing.T, chat, text string) {
	t.Helper()
	h.sayAs(t, "test:alice", chat, text)
}

func (h *harness) sayAs(t *testing.T, from core.Identity, chat, text string) {
	t.Helper()
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "test", Chat: chat}, From: from, Text: text}
	if err := h.eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// lastMessage returns the last message of the n-th request to fake f.
func lastMessage(t *testing.T, f *fakeoai.Server, n int) fakeoai.Message {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) <= n {
		t.Fatalf("want request %d, fake saw %d", n, len(reqs))
	}
	msgs := reqs[n].Messages
	return msgs[len(msgs)-1]
}
