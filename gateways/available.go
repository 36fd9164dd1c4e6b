package gateways

import (
	"context"
	"errors"

	"github.com/gatehouse-bot/gatehouse/core"
)

// Availability is an optional ability of an Inbox: Available says, cheaply
// and without submitting anything, whether a message would be taken now.
// An error matching core.ErrUnavailable means the store is unreachable: a
// gateway that acknowledges a delivery before it submits it (a Slack
// envelope, an Events API request) leaves it unacknowledged, so the
// platform delivers it again later.
type Availability interface {
	Available(ctx context.Context) error
}

// Available asks inbox whether a message would be taken now: nil when
// inbox has no Availability.
func Available(ctx context.Context, inbox Inbox) error {
	if a, ok := inbox.(Availability); ok {
		return a.Available(ctx)
	}
	return nil
}

// Unavailable reports whether err, from Submit or Available, means the
// message cannot be taken now because the store is unreachable
// (core.ErrUnavailable): nothing is lost, it is to be delivered again.
func Unavailable(err error) bool { return errors.Is(err, core.ErrUnavailable) }

// UnavailableNote is the answer to a message refused with
// core.ErrUnavailable where the platform does not deliver it again: the
// sender is to send it again.
const UnavailableNote = "Sorry, I'm temporarily unavailable: try again in a moment."
