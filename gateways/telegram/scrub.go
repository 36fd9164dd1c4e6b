package telegram

import (
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// scrub removes the token (and the webhook secret) from err's text.
func (g *Gateway) scrub(err error) error { return gateways.ScrubError(g.secrets, err) }
