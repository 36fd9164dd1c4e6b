package discord

import (
	"context"

	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// A gateway that accepts the websocket and never says HELLO must not hold
// the opening for ever: discordgo reads HELLO without a deadline, under
// the session's lock.
func TestSilentGatewayIsGivenUpAndReopened(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	fake.WithholdHello(1)
	h := newHarness(t, fake, func(c *Config) { c.SendTimeout = 300 * time.Millisecond }).start()
	if n := fake.Connections(); n < 2 {
		t.Errorf("%d sockets opened; want the silent one and another", n)
	}
	// The same on a reconnect.
	fake.InjectMessage(dm(fake, ann, "before"))
	h.inbox.Next(t)
	fake.WithholdHello(1)
	conns := fake.Connections()
	fake.DropConnection()
	testutil.WaitFor(t, "a session on a socket after the silent one", func() bool {
		return fake.Connections() >= conns+2 && fake.Connected() == 1
	})
	fake.InjectMessage(dm(fake, ann, "after"))
	if s := h.inbox.Next(t); s.Text != "after" {
		t.Fatalf("signal %+v", s)
	}
}

// Shutdown while the websocket is being opened (here: a gateway that never
// answers) ends Run at once, whatever the open's own timeout.
func TestShutdownWhileOpeningASilentGateway(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	fake.WithholdHello(1000)
	h := newHarness(t, fake, func(c *Config) { c.SendTimeout = time.Hour })
	h.run = gatewaytest.NewRunner(t, "Run", 10*time.Second)
	h.run.Go(func(ctx context.Context) error { return h.gw.Run(ctx, h.inbox) })
	testutil.WaitFor(t, "the silent socket opened", func() bool { return fake.Connections() > 0 })
	h.stop() // fails the test unless Run returns
}

// A GET /gateway that hangs (discordgo asks it without a context) is given
// up after the send timeout and asked again.
func TestHangingGatewayURLFetchIsRetried(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	fake.FailNext(fakediscord.RouteGateway, 1, fakediscord.FaultHang)
	newHarness(t, fake, func(c *Config) { c.SendTimeout = 300 * time.Millisecond }).start()
	if n := fake.Calls(fakediscord.RouteGateway); n < 2 {
		t.Errorf("GET /gateway asked %d times", n)
	}
}
