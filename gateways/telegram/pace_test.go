package telegram

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
)

// TestDefaultPaceHoldsTelegramsLimits: with the default configuration a
// burst of replies and edits to 40 chats never puts more than one request
// into one chat, or more than 30 into all chats, in any second (Telegram's
// limits for a bot), and the global limit is used to the full.
func TestDefaultPaceHoldsTelegramsLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := Config{Token: "t"}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		out, err := (&Gateway{cfg: c}).newOutbox()
		if err != nil {
			t.Fatal(err)
		}
		got := gatewaytest.Burst(t, out, "telegram", 40, 2, time.Second)
		if got != (gatewaytest.Busiest{PerChat: 1, All: 30}) {
			t.Errorf("busiest second: %+v; want 1 request in one chat and 30 in all", got)
		}
	})
}
