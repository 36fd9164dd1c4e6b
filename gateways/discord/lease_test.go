package discord

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// leaseTTL is the lease_ttl of the lease tests: short, so that a takeover
// is quick; the waits do not depend on it.
const leaseTTL = 600 * time.Millisecond

// cuttable is one instance's way to the shared leases, which the test can
// cut (the instance's network to the database lost, or the instance dead
// without releasing anything).
type cuttable struct {
	gateways.Leaser
	cut atomic.Bool
}

var errCut = errors.New("cut off from the store")

func (c *cuttable) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if c.cut.Load() {
		return false, errCut
	}
	return c.Leaser.AcquireLease(ctx, name, holder, ttl)
}

func (c *cuttable) ReleaseLease(ctx context.Context, name, holder string) error {
	if c.cut.Load() {
		return errCut
	}
	return c.Leaser.ReleaseLease(ctx, name, holder)
}

// newLeasedHarness is newHarness with the websocket session under the
// lease l, as holder.
func newLeasedHarness(t *testing.T, h *harness, l gateways.Leaser, holder string) *harness {
	t.Helper()
	cfg := FastConfig(h.fake)
	gw, err := New(context.Background(), cfg, Deps{Log: zerolog.New(h.logs).Level(zerolog.DebugLevel), Approvals: h.appr,
		Metrics: h.metrics, Lease: &gateways.LeaseConfig{Leaser: l, Holder: holder, TTL: leaseTTL}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.gw = gw
	t.Cleanup(func() {
		if h.run != nil {
			h.stop()
		}
		assertNoToken(t, h.logs.String())
	})
	return h
}

// TestGatewaySessionRunsUnderTheLease: two instances of one bot sharing
// the leases: only the lease's holder opens a websocket session (Discord
// would deliver every event to both, and both would answer); the other
// stands by, ready, and sends replies over REST all the same; when the
// holder is cut off without releasing the lease (it died, or lost the
// database), it closes its session before the lease expires and the other
// opens one within lease_ttl plus a renewal; a message sent afterwards
// reaches the new holder only.
func TestGatewaySessionRunsUnderTheLease(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	t.Cleanup(fake.Close)
	leases := gatewaytest.NewLeases()
	toA := &cuttable{Leaser: leases}
	instance := func(l gateways.Leaser, holder string) *harness {
		h := &harness{t: t, fake: fake, inbox: testutil.NewInbox(), appr: gatewaytest.NewApprovals("approved — running…"),
			logs: &testutil.SyncBuffer{}, metrics: metrics.New()}
		return newLeasedHarness(t, h, l, holder)
	}
	a := instance(toA, "a")
	b := instance(leases, "b")
	name := "discord:" + fake.Bot().ID

	a.start()
	testutil.WaitFor(t, "a holding the lease with its session up", func() bool {
		h, _ := leases.Holder(name)
		return h == "a" && a.gw.Ready() == nil && !a.gw.standby.Load()
	})
	b.run = gatewaytest.NewRunner(t, "Run", 10*time.Second)
	b.run.Go(func(ctx context.Context) error { return b.gw.Run(ctx, b.inbox) })
	testutil.WaitFor(t, "b standing by", func() bool { return b.gw.standby.Load() })
	if err := b.gw.Ready(); err != nil {
		t.Fatalf("b standing by is not ready: %v", err)
	}

	fake.InjectMessage(dm(fake, ann, "one"))
	if s := a.inbox.Next(t); s.Text != "one" {
		t.Fatalf("a got %+v, want one", s)
	}
	if n := fake.Connections(); n != 1 {
		t.Fatalf("%d websocket connections while a holds the lease, want 1", n)
	}
	b.inbox.Empty(t)

	// Sending works from the instance standing by.
	channel := fake.DMChannel(ann.ID)
	if _, err := b.gw.Act(context.Background(), reply(channel, "sent by b")); err != nil {
		t.Fatalf("b sends while standing by: %v", err)
	}
	if got := fake.Messages(channel); len(got) != 1 || got[0].Content != "sent by b" {
		t.Fatalf("messages %+v, want b's reply", got)
	}

	// a is cut off: it keeps the lease in the store until it expires.
	toA.cut.Store(true)
	testutil.WaitFor(t, "b holding the lease with its session up, a's closed", func() bool {
		h, _ := leases.Holder(name)
		return h == "b" && !b.gw.standby.Load() && b.gw.Ready() == nil && fake.Connected() == 1 && a.gw.standby.Load()
	})
	if n := fake.Connections(); n != 2 {
		t.Fatalf("%d websocket connections after the takeover, want 2 (a's, then b's)", n)
	}
	fake.InjectMessage(dm(fake, ann, "two"))
	if s := b.inbox.Next(t); s.Text != "two" {
		t.Fatalf("b got %+v after the takeover, want two", s)
	}
	a.inbox.Empty(t)
	b.inbox.Empty(t)
}
