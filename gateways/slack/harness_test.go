package slack

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// The test credentials are shaped like nothing well known, so only the
// gateway's own scrubbing can hide them.
const (
	testBotToken = "xoxb-TEST-bot-token-never-logged"
	testAppToken = "xapp-TEST-app-token-never-logged"
	testSecret   = "TEST-signing-secret-never-logged"
)

// harness runs one gateway against one fake.
type harness struct {
	t     testing.TB
	fake  *fakeslack.Server
	gw    *Gateway
	inbox *testutil.Inbox
	appr  *gatewaytest.Approvals
	logs  *testutil.SyncBuffer
	run   *gatewaytest.Runner
}

func newFake(o fakeslack.Options) *fakeslack.Server {
	o.BotToken, o.AppToken = testBotToken, testAppToken
	return fakeslack.New(o)
}

// newHarness starts a fake and builds a gateway with fast test settings.
// Its cleanup stops both and checks that no log line holds a secret.
func newHarness(t testing.TB, o fakeslack.Options, tune ...func(*Config)) *harness {
	t.Helper()
	return newHarnessWith(t, newFake(o), Deps{}, tune...)
}

// newHarnessWith is newHarness on fake with the Memory and Auth of d.
func newHarnessWith(t testing.TB, fake *fakeslack.Server, d Deps, tune ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, fake: fake, inbox: testutil.NewInbox(), appr: gatewaytest.NewApprovals("approved — running…"), logs: &testutil.SyncBuffer{}}
	cfg := FastConfig(fake)
	cfg.SigningSecret = testSecret
	for _, f := range tune {
		f(&cfg)
	}
	d.Log, d.Approvals = zerolog.New(h.logs).Level(zerolog.DebugLevel), h.appr
	gw, err := New(context.Background(), cfg, d)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.gw = gw
	t.Cleanup(func() {
		h.stop()
		fake.Close()
		AssertNoSecrets(t, h.logs.String())
	})
	return h
}

// FastConfig is the gateway's configuration against the fake with
// test-speed settings; the end-to-end tests use it too.
func FastConfig(fake *fakeslack.Server) Config {
	return Config{
		BotToken: fake.BotToken(), AppToken: fake.AppToken(), APIURL: fake.URL() + "/api/",
		Pace: gateways.Limits{
			PerChat: gateways.Limit{N: 5, Per: 5 * time.Millisecond},
			Global:  gateways.Limit{N: 50, Per: 5 * time.Millisecond},
		},
		Backoff:      gateways.Backoff{Min: 5 * time.Millisecond, Max: 50 * time.Millisecond},
		RetryFor:     30 * time.Second,
		SendTimeout:  5 * time.Second,
		PingInterval: 5 * time.Second,
	}
}

// AssertNoSecrets fails t when logs hold a test token or the signing
// secret.
func AssertNoSecrets(t testing.TB, logs string) {
	t.Helper()
	gatewaytest.NoSecrets(t, logs, testBotToken, testAppToken, testSecret, "TEST-bot-token", "TEST-app-token", "TEST-signing-secret")
}

// start runs the gateway until the test ends or stop is called.
func (h *harness) start() *harness {
	h.run = gatewaytest.NewRunner(h.t, "Run", 10*time.Second)
	h.run.Go(func(ctx context.Context) error { return h.gw.Run(ctx, h.inbox) })
	testutil.WaitFor(h.t, "Run started", func() bool { return h.gw.run.Load() != nil })
	if h.gw.cfg.Mode == ModeSocket {
		testutil.WaitFor(h.t, "a socket mode connection", func() bool { return h.fake.Live() > 0 })
	}
	return h
}

// stop cancels Run and waits for it to return.
func (h *harness) stop() { h.run.Stop() }

// act sends a as the engine would and fails the test on an error.
func (h *harness) act(a core.Action) {
	h.t.Helper()
	if _, err := h.gw.Act(context.Background(), a); err != nil {
		h.t.Fatalf("Act: %v", err)
	}
}

func reply(conv core.Conversation, text string) core.Action {
	return core.Action{Kind: core.ActionReply, Conv: conv, Text: text}
}
