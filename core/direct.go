package core

import (
	"context"
	"errors"
	"fmt"
)

// DirectMessenger is an optional ability of a gateway actuator: the
// conversation of a direct message between the bot and a person of the
// gateway (on some platforms a user's id is their private chat, others
// open one on request). The hitl broker sends an escalated request there.
type DirectMessenger interface {
	// DirectConversation returns the direct conversation with id, a
	// person of this gateway, opening it on the platform when it must.
	DirectConversation(ctx context.Context, id Identity) (Conversation, error)
}

// ErrNoDirect: the identity's gateway cannot open a direct conversation
// (it is not running, or it is no DirectMessenger).
var ErrNoDirect = errors.New("core: the gateway cannot open a direct conversation")

// DirectConversation returns the direct conversation with id through its
// gateway's DirectMessenger; ErrNoDirect when the gateway has none. A
// panicking gateway is recovered and logged.
func (e *Engine) DirectConversation(ctx context.Context, id Identity) (c Conversation, err error) {
	gw := id.Gateway()
	act, ok := e.actuators.Get(gw)
	if !ok || id.IsSchedule() {
		return Conversation{}, fmt.Errorf("%w: %s", ErrNoDirect, gw)
	}
	dm, ok := act.(DirectMessenger)
	if !ok {
		return Conversation{}, fmt.Errorf("%w: %s", ErrNoDirect, gw)
	}
	defer e.recoverGateway(Conversation{Gateway: gw}, "direct conversation", &err)
	c, err = dm.DirectConversation(ctx, id)
	if err != nil {
		return Conversation{}, fmt.Errorf("core: %s direct conversation: %w", gw, err)
	}
	return c, nil
}
