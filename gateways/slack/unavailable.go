package slack

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

// refuse reports whether a message event is to be left unacknowledged,
// so that Slack delivers it again later: the inbox says the store is
// unreachable (gateways.Availability). It logs once when that starts and
// once when it ends, not once per event.
func (g *Gateway) refuse(ctx context.Context, rs *runState) bool {
	if rs == nil {
		return false
	}
	err := gateways.Available(ctx, rs.inbox)
	if !gateways.Unavailable(err) {
		if g.refusing.CompareAndSwap(true, false) {
			g.log.Info().Msg("the store answers again: acknowledging events")
		}
		return false
	}
	if !g.refusing.Swap(true) {
		g.log.Warn().Err(err).Msg("the store does not answer: events are left unacknowledged, so Slack delivers them again")
	}
	return true
}
