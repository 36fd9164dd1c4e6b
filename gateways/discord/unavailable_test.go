package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestStoreDownAnswersTryAgain: a message arriving while the store does
// not answer (Discord does not deliver it again) is answered "temporarily
// unavailable, try again"; the gateway keeps receiving, and the next
// message, once the store is back, reaches the inbox.
func TestStoreDownAnswersTryAgain(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	h := newHarness(t, fake)
	inbox := gatewaytest.NewStoreDownInbox()
	h.run = gatewaytest.NewRunner(t, "Run", 10*time.Second)
	h.run.Go(func(ctx context.Context) error { return h.gw.Run(ctx, inbox) })
	testutil.WaitFor(t, "the session identified", func() bool { return len(fake.Identifies()) > 0 })

	inbox.Down.Store(true)
	fake.InjectMessage(dm(fake, ann, "while the store is down"))
	ch := fake.DMChannel(ann.ID)
	testutil.WaitFor(t, "the try-again answer", func() bool {
		for _, s := range fake.Messages(ch) {
			if strings.Contains(s.Content, gateways.UnavailableNote) {
				return true
			}
		}
		return false
	})
	inbox.Down.Store(false)
	fake.InjectMessage(dm(fake, ann, "once it is back"))
	if s := inbox.Next(t); s.Text != "once it is back" {
		t.Fatalf("signal %q; want the message sent once the store is back", s.Text)
	}
	if inbox.Refused() != 1 {
		t.Errorf("%d signals refused; want 1", inbox.Refused())
	}
}
