package slack

import (
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// scrub removes the tokens and the signing secret from err's text.
func (g *Gateway) scrub(err error) error { return gateways.ScrubError(g.secrets, err) }
