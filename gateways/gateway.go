// Package gateways is the home of the Gateway interface and of what all
// platform adapters share. Each adapter lives in its own sub-package and is
// wired in cmd/bot; core never imports a gateway.
package gateways

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/core"
)

// Inbox is where a gateway delivers signals (the core.Engine implements it).
// Submit blocks while the conversation's queue is full: it delays, it does
// not drop; it fails only when ctx ends or the engine has stopped
// (core.ErrStopped), both of which mean the bot is shutting down.
type Inbox interface {
	Submit(ctx context.Context, s core.Signal) error
}

// Gateway is a chat platform adapter. It is the actuator for its own
// conversations: Act delivers ActionReply actions (splitting long text,
// pacing, retrying) and returns an error only when delivery finally failed.
type Gateway interface {
	core.Actuator
	// Name is the gateway's name and the first part of its conversation keys
	// and identities.
	Name() string
	// Run receives messages until ctx ends, normalising each into a Signal
	// for inbox. It returns nil on cancellation.
	Run(ctx context.Context, inbox Inbox) error
}

// Approvals resolves button presses exactly like the typed commands
// (the hitl broker implements it; it does not import this package, so the
// interface stays here with the adapters that call it). from is the identity that pressed, as the
// platform reports it; authorisation is checked against it, never the token.
// The returned text is a short outcome for a toast ("approved", "not
// authorised", "already resolved by …"). A gateway whose acknowledgement
// of the press is that toast (a callback query's answer) passes ack:
// Press calls it with the toast, once, before an approved action starts,
// so the presser is answered before the work begins. A gateway that
// acknowledged the press already (a deferred interaction response) passes
// nil.
type Approvals interface {
	Press(ctx context.Context, from core.Identity, conv core.Conversation, token string, d core.ApprovalDecision, ack func(toast string)) string
}

// Cursors persists small per-gateway positions (e.g. a long-poll update
// offset) so a restarted gateway neither loses nor replays messages.
type Cursors interface {
	Cursor(ctx context.Context, key string) (string, error) // "" when unset
	SetCursor(ctx context.Context, key, value string) error
}

// Memory remembers keys, by scope, across restarts: what a gateway must
// not forget when the bot restarts, such as the Slack threads the bot takes
// part in. A key is remembered from its latest Remember until the store
// prunes it (store.MemoryKeep after it; the oldest go first past
// store.MemoryMax keys in a scope), so a gateway remembers only what an
// allowed user or the bot itself caused, never what a stranger sends.
// Scopes and keys are short ids (at most 256 bytes each).
type Memory interface {
	Remember(ctx context.Context, scope, key string) error
	Remembered(ctx context.Context, scope, key string) (bool, error)
}

// Parking keeps, by scope, platform updates a gateway had to confirm to
// its platform while their turn still ran (a long poll that may hold back
// only so many), so that a restarted gateway hands them over again. A
// body is the update as the platform sent it; the store refuses one over
// store.MaxParkedBody bytes.
type Parking interface {
	// Park stores each body under its id in scope, all in one
	// transaction; an id parked already keeps its first body.
	Park(ctx context.Context, scope string, updates map[int64][]byte) error
	// Unpark forgets id in scope; forgetting one not parked is no error.
	Unpark(ctx context.Context, scope string, id int64) error
	// Parked returns at most limit of scope's parked updates, the lowest ids.
	Parked(ctx context.Context, scope string, limit int) (map[int64][]byte, error)
}

// Admission says whether a signal's sender passes the allow list
// (core.Auth implements it). The engine decides who may talk; a gateway
// asks it only to decide what to remember about a sender, and what to look
// up for one (see Memory).
type Admission interface {
	Allowed(s core.Signal) bool
}

// Readier is an optional ability of a gateway: whether it is connected to
// its platform now. /readyz is ready only when every gateway that is a
// Readier returns nil. A polling gateway is ready when its last poll was
// answered within its long-poll timeout plus a margin; a websocket gateway
// when its session is up (after the handshake, until it drops). The error
// says what is missing, in one line with no secret.
type Readier interface {
	Ready() error
}
