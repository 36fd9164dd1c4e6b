package slack

import (
	"errors"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

var _ gateways.Readier = (*Gateway)(nil)

// Ready reports whether the gateway is connected. Socket Mode: Slack's
// hello was received and the connection not lost since. Events mode: Run
// serves the Events API handler.
func (g *Gateway) Ready() error {
	if !g.up.Load() {
		if g.cfg.Mode == ModeSocket {
			return errors.New("slack: socket mode connection not up")
		}
		return errors.New("slack: events endpoint not serving yet")
	}
	return nil
}
