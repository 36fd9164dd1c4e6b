package slack

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
)

// TestDefaultPaceHoldsSlacksLimits: with the default configuration a
// burst of posts and updates to 40 channels never puts more than one
// request into one channel, or more than 20 into all, in any second, and
// the overall limit is used to the full.
func TestDefaultPaceHoldsSlacksLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := Config{BotToken: "xoxb-t", AppToken: "xapp-t"}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		out, err := (&Gateway{cfg: c}).newOutbox()
		if err != nil {
			t.Fatal(err)
		}
		got := gatewaytest.Burst(t, out, "slack", 40, 2, time.Second)
		if got != (gatewaytest.Busiest{PerChat: 1, All: 20}) {
			t.Errorf("busiest second: %+v; want 1 request in one channel and 20 in all", got)
		}
	})
}
