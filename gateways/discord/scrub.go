package discord

import (
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// scrub removes the bot token from err's text. Errors that do not hold it
// (discordgo's REST and rate-limit errors never do) are returned as they
// are, so the delivery layer can still read them.
func (g *Gateway) scrub(err error) error { return gateways.ScrubError(g.secrets, err) }
