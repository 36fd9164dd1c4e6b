package telegram

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// testToken is shaped like nothing well-known, so only the gateway's own
// scrubbing can hide it.
const testToken = "987654:TEST-bot-token-never-logged"

// harness runs one gateway against one fake.
type harness struct {
	t     *testing.T
	fake  *faketg.Server
	gw    *Gateway
	inbox *testutil.Inbox
	appr  *gatewaytest.Approvals
	logs  *testutil.SyncBuffer
	run   *gatewaytest.Runner
}

type option func(*Config, *Deps)

func withCursors(c gateways.Cursors) option { return func(_ *Config, d *Deps) { d.Cursors = c } }

func withConfig(f func(*Config)) option { return func(c *Config, _ *Deps) { f(c) } }

// newHarness starts a fake and builds a gateway with fast test settings.
// Its cleanup stops both and checks that no log line holds the token.
func newHarness(t *testing.T, opts ...option) *harness {
	t.Helper()
	return newHarnessOn(t, newFake(), opts...)
}

// newFake starts a fake whose retry_after unit matches FastConfig's.
func newFake() *faketg.Server {
	return faketg.New(faketg.Options{Token: testToken, MaxPollWait: 200 * time.Millisecond, RetryAfterUnit: 10 * time.Millisecond})
}

func newHarnessOn(t *testing.T, fake *faketg.Server, opts ...option) *harness {
	t.Helper()
	h := &harness{t: t, fake: fake, inbox: testutil.NewInbox(), appr: gatewaytest.NewApprovals("Approved."), logs: &testutil.SyncBuffer{}}
	cfg := FastConfig(fake)
	deps := Deps{Log: zerolog.New(h.logs).Level(zerolog.DebugLevel), Approvals: h.appr}
	for _, o := range opts {
		o(&cfg, &deps)
	}
	gw, err := New(context.Background(), cfg, deps)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.gw = gw
	t.Cleanup(func() {
		h.stop()
		fake.Close()
		assertNoToken(t, h.logs.String())
	})
	return h
}

// FastConfig is the gateway's configuration against the fake with
// test-speed settings; the external end-to-end tests use it too.
func FastConfig(fake *faketg.Server) Config {
	return Config{
		Token: fake.Token(), APIURL: fake.URL(),
		PollTimeout: time.Second, StallMargin: 300 * time.Millisecond,
		Pace: gateways.Limits{
			PerChat: gateways.Limit{N: 5, Per: 5 * time.Millisecond},
			Global:  gateways.Limit{N: 50, Per: 5 * time.Millisecond},
		},
		Backoff:        gateways.Backoff{Min: 5 * time.Millisecond, Max: 50 * time.Millisecond},
		RetryAfterUnit: 10 * time.Millisecond,
		RetryFor:       10 * time.Second,
		RepollEvery:    20 * time.Millisecond,
		PollFloor:      20 * time.Millisecond,
		SendTimeout:    5 * time.Second,
		TypingEvery:    20 * time.Millisecond,
	}
}

// start runs the gateway until the test ends or stop is called.
func (h *harness) start() *harness {
	h.run = gatewaytest.NewRunner(h.t, "Run", 5*time.Second)
	h.run.Go(func(ctx context.Context) error { return h.gw.Run(ctx, h.inbox) })
	return h
}

// stop cancels Run and waits for it to return.
func (h *harness) stop() { h.run.Stop() }

// assertNoToken fails t when text (logs, an error) holds the test token.
func assertNoToken(t *testing.T, text string) {
	t.Helper()
	gatewaytest.NoSecrets(t, text, testToken, "TEST-bot-token")
}

// memStore is a Cursors shared across gateway restarts.
type memStore struct {
	mu sync.Mutex
	m  map[string]string
}

func (m *memStore) Cursor(_ context.Context, key string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[key], nil
}

func (m *memStore) SetCursor(_ context.Context, key, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]string{}
	}
	m.m[key] = value
	return nil
}

// user and group helpers for injected messages.
var (
	alice = faketg.User{ID: 1001, FirstName: "Alice", Username: "alice"}
	bob   = faketg.User{ID: 1002, FirstName: "Bob", Username: "bob"}
	group = faketg.Chat{ID: -100500, Type: "supergroup", Title: "team"}
)

func dm(from faketg.User, text string) faketg.Message {
	return faketg.Message{From: &from, Chat: faketg.Chat{ID: from.ID, Type: "private"}, Text: text}
}

func inGroup(from faketg.User, text string) faketg.Message {
	return faketg.Message{From: &from, Chat: group, Text: text}
}

func reply(conv core.Conversation, text string) core.Action {
	return core.Action{Kind: core.ActionReply, Conv: conv, Text: text}
}

func convOf(chat int64) core.Conversation {
	return core.Conversation{Gateway: Name, Chat: itoa64(chat)}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
