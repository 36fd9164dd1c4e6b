package discord

import (
	"errors"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

var _ gateways.Readier = (*Gateway)(nil)

// Ready reports whether the websocket session is up: READY or RESUMED was
// received and the connection has not been lost since; or, under a lease
// (Deps.Lease), another instance holds it and this one stands by.
func (g *Gateway) Ready() error {
	if g.standby.Load() {
		return nil
	}
	if !g.up.Load() {
		return errors.New("discord: websocket session not up")
	}
	return nil
}
