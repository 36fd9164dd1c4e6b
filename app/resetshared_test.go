package app

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/gateways"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
)

// startResetInstance runs an engine and an inbox of one instance named
// name on db, which holds the history too, asking the model at f and
// sending its replies to p; it runs until the test ends.
func startResetInstance(t *testing.T, name string, db *postgres.DB, f *fakeoai.Server, p *platform) *core.Engine {
	t.Helper()
	ctx, kill := context.WithCancel(context.Background())
	log := zerolog.New(zerolog.NewTestWriter(t)).With().Str("i", name).Logger()
	prov, err := llm.NewOpenAI(llm.OpenAIConfig{Name: "p", BaseURL: f.URL(), APIKey: "test-key-123456", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := cluster.New(cluster.Config{Store: db, Instance: name, TTL: 2 * time.Second, Poll: 20 * time.Millisecond, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	in.UseGateways([]string{"gw"})
	eng, err := core.NewEngine(core.Config{
		Provider: llm.NewCascade(log, prov),
		Tools:    tools.NewRegistry(tools.Options{Log: log}),
		Auth:     core.NewAuth(map[string][]string{"gw": {"*"}}, nil),
		Journal:  in,
		History:  db,
		Model:    "test-model",
		Log:      log,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Register("gw", core.ActuatorFunc(func(ctx context.Context, a core.Action) (core.Result, error) {
		_, err := p.send(ctx, gateways.Chunk{Text: a.Text})
		return core.Result{}, err
	})); err != nil {
		t.Fatal(err)
	}
	engDone, inDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(engDone); _ = eng.Run(ctx) }()
	go func() { defer close(inDone); _ = in.Run(ctx, eng) }()
	t.Cleanup(func() { kill(); <-inDone; <-engDone })
	return eng
}

// TestResetOnAnotherInstanceStopsTheTurn: /reset typed to instance b
// while the conversation's turn runs on instance a (one PostgreSQL
// database) stops a's turn, nothing of that turn lands in the history
// afterwards, and the next message starts from an empty history; b
// answers that the turn was stopped, as one instance does.
func TestResetOnAnotherInstanceStopsTheTurn(t *testing.T) {
	dsn := pgtest.DSN(t)
	open := func() *postgres.DB {
		db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dbA, dbB := open(), open()
	p := &platform{}
	f := fakeoai.Start(t)
	asked, release := make(chan struct{}), make(chan struct{})
	var askedOnce, releaseOnce sync.Once
	f.Respond(func(r fakeoai.Request) fakeoai.Step {
		if r.LastUser() == "the question" {
			askedOnce.Do(func() { close(asked) })
			<-release // the turn is held open until the test lets it go
			return fakeoai.Text("the late answer")
		}
		return fakeoai.Text("a fresh answer")
	})
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the instances' ends are waited for

	conv := core.Conversation{Gateway: "gw", Chat: "c"}
	a := startResetInstance(t, "a", dbA, f, p)
	s := core.Signal{Kind: core.KindMessage, Conv: conv, From: "gw:1", Text: "the question", MessageID: "m1", At: time.Now()}
	if err := a.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(testutil.HangGuard):
		t.Fatal("a never asked the model")
	}

	b := startResetInstance(t, "b", dbB, f, p)
	r := core.Signal{Kind: core.KindMessage, Conv: conv, From: "gw:1", Text: "/reset", MessageID: "m2", At: time.Now()}
	if err := b.Submit(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	var answer string
	testutil.WaitFor(t, "b's answer to /reset", func() bool {
		for _, m := range p.list() {
			if strings.HasPrefix(m, "Done: I forgot") {
				answer = m
				return true
			}
		}
		return false
	})
	// The words of one instance: the turn was stopped, though on a.
	if !strings.Contains(answer, "stopped the turn in progress") {
		t.Errorf("b's answer to /reset %q does not say the turn in progress was stopped", answer)
	}

	// a's turn stops while the model still holds its answer: its inbox
	// entry is finished.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	testutil.WaitFor(t, "a's turn stopped and its entry done", func() bool {
		var open int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM inbox WHERE done = 0`).Scan(&open); err != nil {
			t.Fatal(err)
		}
		return open == 0
	})
	unblock()
	if err := a.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := dbB.Load(context.Background(), conv.Key())
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 0 {
		t.Fatalf("history after /reset on another instance holds %d message(s) of the stopped turn: %+v", len(h), h)
	}
	for _, m := range p.list() {
		if strings.Contains(m, "the late answer") {
			t.Errorf("the stopped turn's answer was sent: %q", m)
		}
	}

	// The next message starts from an empty history.
	n := core.Signal{Kind: core.KindMessage, Conv: conv, From: "gw:1", Text: "the next one", MessageID: "m3", At: time.Now()}
	if err := b.Submit(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the next message answered", func() bool {
		for _, m := range p.list() {
			if strings.Contains(m, "a fresh answer") {
				return true
			}
		}
		return false
	})
	for _, req := range f.Requests() {
		if req.LastUser() != "the next one" {
			continue
		}
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "the question") || strings.Contains(m.Content, "the late answer") {
				t.Errorf("the next message's request carries the reset turn: %s: %q", m.Role, m.Content)
			}
		}
	}
}
