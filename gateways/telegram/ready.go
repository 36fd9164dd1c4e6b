package telegram

import (
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

var _ gateways.Readier = (*Gateway)(nil)

// Ready reports whether the gateway is connected. Polling: a getUpdates
// was answered within the window a healthy loop needs between answers
// (the long-poll timeout, the stall margin and the longer of the re-poll
// pause and the poll floor); or, under a lease (Deps.Lease), another
// instance holds it and this one stands by. Webhook: Run has started
// serving.
func (g *Gateway) Ready() error {
	if g.cfg.Mode == ModeWebhook {
		if g.run.Load() == nil {
			return errors.New("telegram: webhook not serving yet")
		}
		return nil
	}
	if g.standby.Load() {
		return nil
	}
	last := g.lastPoll.Load()
	if last == 0 {
		return errors.New("telegram: no getUpdates answered yet")
	}
	window := g.cfg.PollTimeout + g.cfg.StallMargin + max(g.cfg.RepollEvery, g.cfg.PollFloor)
	if ago := time.Since(time.Unix(0, last)); ago > window {
		return fmt.Errorf("telegram: last getUpdates answered %s ago (more than %s)", ago.Round(time.Second), window)
	}
	return nil
}
