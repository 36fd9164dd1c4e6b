package app

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
)

// platform is the chat platform both instances send to: what it
// accepted.
type platform struct {
	mu   sync.Mutex
	sent []string
}

func (p *platform) send(_ context.Context, c gateways.Chunk) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, c.Text)
	return "1", nil
}

func (p *platform) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sent...)
}

// stalledStore is an instance's store that stands still between recording
// its turn's reply stage and writing the reply to the outbox, as an
// instance killed there would: its first reply write waits (reached
// closed) until release is closed, and from then on its inbox claims are
// not renewed and it claims none. Released, the write goes on with a context of its own, as
// an instance frozen there (a paused VM) and then thawed would do.
type stalledStore struct {
	*postgres.DB
	once             sync.Once
	dead             atomic.Bool
	reached, release chan struct{}
}

func (s *stalledStore) AddReply(ctx context.Context, r store.OutboxReply) (int64, error) {
	stalled := false
	s.once.Do(func() {
		stalled = true
		s.dead.Store(true)
		close(s.reached)
		<-s.release
	})
	if stalled {
		ctx = context.Background() // the caller's deadline passed while it stood still
	}
	return s.DB.AddReply(ctx, r)
}

func (s *stalledStore) ClaimInbox(ctx context.Context, holder string, gws []string, ttl time.Duration) (store.InboxEntry, bool, error) {
	if s.dead.Load() {
		return store.InboxEntry{}, false, errors.New("stalled: no claim")
	}
	return s.DB.ClaimInbox(ctx, holder, gws, ttl)
}

func (s *stalledStore) RenewInbox(ctx context.Context, holder string, ids []int64, ttl time.Duration) error {
	if s.dead.Load() {
		return errors.New("stalled: no renewal")
	}
	return s.DB.RenewInbox(ctx, holder, ids, ttl)
}

// inboxOutbox is a store with an inbox and an outbox.
type inboxOutbox interface {
	store.Inbox
	store.Outbox
}

// replyInstance is an engine, an inbox and an outbox of one instance
// named name on db, sending to p as token "gw:1".
type replyInstance struct {
	eng *core.Engine
	in  *cluster.Inbox
	llm *fakeoai.Server
}

// It runs until kill is called or the test ends.
func startReplyInstance(t *testing.T, name string, db inboxOutbox, p *platform) (r *replyInstance, kill func()) {
	t.Helper()
	ctx, kill := context.WithCancel(context.Background())
	log := zerolog.New(zerolog.NewTestWriter(t)).With().Str("i", name).Logger()
	f := fakeoai.Start(t)
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
		Model:    "test-model",
		Log:      log,
	})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := gateways.NewOutbox(gateways.OutboxConfig{Limit: 4096, Log: log, Sender: "gw:1",
		Classify: func(error) gateways.Failure { return gateways.Failure{Verdict: gateways.Permanent} },
		Shared:   &gateways.Shared{Journal: cluster.NewReplies(db, name)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Register("gw", core.ActuatorFunc(func(ctx context.Context, a core.Action) (core.Result, error) {
		_, err := ob.Reply(ctx, a.Conv, a.Text, p.send)
		return core.Result{}, err
	})); err != nil {
		t.Fatal(err)
	}
	engDone, inDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(engDone); _ = eng.Run(ctx) }()
	go func() { defer close(inDone); _ = in.Run(ctx, eng) }()
	t.Cleanup(func() { kill(); <-inDone; <-engDone })
	return &replyInstance{eng: eng, in: in, llm: f}, kill
}

// TestReplyOnceAcrossADeathBeforeTheOutbox: an instance that recorded its
// turn's reply stage and stopped before writing the reply to the outbox
// (killed there) leaves the reply to the instance that takes the turn
// over, which sends it, once, without asking the model again; the first
// instance, should it come back, does not send it a second time.
func TestReplyOnceAcrossADeathBeforeTheOutbox(t *testing.T) {
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
	stall := &stalledStore{DB: dbA, reached: make(chan struct{}), release: make(chan struct{})}
	released := sync.OnceFunc(func() { close(stall.release) })

	a, _ := startReplyInstance(t, "a", stall, p)
	t.Cleanup(released) // before a's end is waited for
	a.llm.Push(fakeoai.Text("the answer"))
	s := core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "gw", Chat: "c"}, From: "gw:1",
		Text: "the question", MessageID: "m1", At: time.Now()}
	if err := a.eng.Submit(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stall.reached:
	case <-time.After(testutil.HangGuard):
		t.Fatal("a never wrote its reply")
	}

	b, _ := startReplyInstance(t, "b", dbB, p)
	testutil.WaitFor(t, "the reply sent by the instance that took the turn over", func() bool { return len(p.list()) > 0 })

	// a comes back to life: it must not send the reply again.
	released()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	testutil.WaitFor(t, "the inbox entry done and no reply pending", func() bool {
		var pending, open int
		if err := conn.QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM outbox WHERE state = 'pending'), (SELECT count(*) FROM inbox WHERE done = 0)`).Scan(&pending, &open); err != nil {
			t.Fatal(err)
		}
		return pending == 0 && open == 0
	})
	if err := a.eng.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p.list(); len(got) != 1 || got[0] != "the answer" {
		t.Fatalf("the platform got %q; want the answer once", got)
	}
	if n := len(b.llm.Requests()); n != 0 {
		t.Fatalf("the instance that took over asked the model %d times; want 0 (the reply was composed)", n)
	}
}
