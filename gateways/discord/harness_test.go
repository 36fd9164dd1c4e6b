package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// testToken is shaped like nothing well-known, so only the gateway's own
// care can keep it out of the logs.
const testToken = "MTEwMDAw.TEST-discord-token-never-logged"

// harness runs one gateway against one fake.
type harness struct {
	t       *testing.T
	fake    *fakediscord.Server
	gw      *Gateway
	inbox   *testutil.Inbox
	appr    *gatewaytest.Approvals
	logs    *testutil.SyncBuffer
	metrics *metrics.Registry
	run     *gatewaytest.Runner
}

type option func(*Config)

// newFake starts a fake with test-speed heartbeats.
func newFake(o fakediscord.Options) *fakediscord.Server {
	o.Token = testToken
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = 100 * time.Millisecond
	}
	return fakediscord.New(o)
}

// newHarness builds a gateway on fake with fast test settings. Its cleanup
// stops both and checks that no log line holds the token.
func newHarness(t *testing.T, fake *fakediscord.Server, opts ...option) *harness {
	t.Helper()
	h := &harness{t: t, fake: fake, inbox: testutil.NewInbox(), appr: gatewaytest.NewApprovals("approved — running…"), logs: &testutil.SyncBuffer{}, metrics: metrics.New()}
	cfg := FastConfig(fake)
	for _, o := range opts {
		o(&cfg)
	}
	gw, err := New(context.Background(), cfg, Deps{Log: zerolog.New(h.logs).Level(zerolog.DebugLevel), Approvals: h.appr, Metrics: h.metrics})
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

// metricsText is the harness registry's /metrics page.
func (h *harness) metricsText() string {
	var b strings.Builder
	if err := h.metrics.WritePrometheus(&b); err != nil {
		h.t.Fatal(err)
	}
	return b.String()
}

// FastConfig is the gateway's configuration against the fake with
// test-speed settings; the end-to-end tests use it too.
func FastConfig(fake *fakediscord.Server) Config {
	return Config{
		Token: fake.Token(), APIURL: fake.URL(),
		Pace: gateways.Limits{
			PerChat: gateways.Limit{N: 50, Per: 10 * time.Millisecond},
			Global:  gateways.Limit{N: 500, Per: 10 * time.Millisecond},
		},
		Backoff:     gateways.Backoff{Min: 5 * time.Millisecond, Max: 50 * time.Millisecond},
		OpenBackoff: gateways.Backoff{Min: 10 * time.Millisecond, Max: 100 * time.Millisecond},
		RetryFor:    20 * time.Second,
		SendTimeout: 5 * time.Second,
		TypingEvery: 20 * time.Millisecond,
	}
}

// start runs the gateway and waits for its session to be ready.
func (h *harness) start() *harness {
	h.t.Helper()
	h.run = gatewaytest.NewRunner(h.t, "Run", 10*time.Second)
	h.run.Go(func(ctx context.Context) error { return h.gw.Run(ctx, h.inbox) })
	testutil.WaitFor(h.t, "the session identified", func() bool { return len(h.fake.Identifies()) > 0 })
	return h
}

// stop cancels Run and waits for it to return.
func (h *harness) stop() { h.run.Stop() }

// assertNoToken fails t when text (logs, an error) holds the test token.
func assertNoToken(t *testing.T, text string) {
	t.Helper()
	gatewaytest.NoSecrets(t, text, testToken, "TEST-discord-token")
}

// Users, a guild and a channel for injected messages.
var (
	ann      = fakediscord.User{ID: "3001", Username: "ann"}
	ben      = fakediscord.User{ID: "3002", Username: "ben"}
	otherBot = fakediscord.User{ID: "3999", Username: "otherbot", Bot: true}
)

const (
	guildID = "5001"
	chanID  = "4001"
)

func dm(fake *fakediscord.Server, from fakediscord.User, text string) fakediscord.Message {
	return fakediscord.Message{ChannelID: fake.DMChannel(from.ID), Author: from, Content: text}
}

func inGuild(from fakediscord.User, text string) fakediscord.Message {
	return fakediscord.Message{ChannelID: chanID, GuildID: guildID, Author: from, Content: text}
}

func reply(channel, text string) core.Action {
	return core.Action{Kind: core.ActionReply, Conv: core.Conversation{Gateway: Name, Chat: channel}, Text: text}
}

func mention(fake *fakediscord.Server) string { return "<@" + fake.Bot().ID + ">" }
