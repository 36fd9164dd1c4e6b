package discord

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
)

// TestDefaultPaceHoldsDiscordsLimits: with the default configuration a
// burst of messages and edits to 80 channels never puts more than 50
// requests into one second overall, or more than 5 into one channel in any
// 5 seconds, and each limit is used to the full.
func TestDefaultPaceHoldsDiscordsLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := Config{Token: "t"}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		out, err := (&Gateway{cfg: c}).newOutbox()
		if err != nil {
			t.Fatal(err)
		}
		if got := gatewaytest.Burst(t, out, "discord", 80, 1, time.Second); got.All != 50 {
			t.Errorf("busiest second: %d requests in all; want 50", got.All)
		}
		out, err = (&Gateway{cfg: c}).newOutbox()
		if err != nil {
			t.Fatal(err)
		}
		if got := gatewaytest.Burst(t, out, "discord", 2, 9, 5*time.Second); got.PerChat != 5 {
			t.Errorf("busiest 5 s: %d requests in one channel; want 5", got.PerChat)
		}
	})
}
