package core

import (
	"context"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// ActionKind tells what an Action does.
type ActionKind uint8

// The kinds of action.
const (
	// ActionReply sends Text to Conv through the gateway named Conv.Gateway.
	ActionReply ActionKind = iota + 1
	// ActionTool runs Call through the tool actuator.
	ActionTool
)

func (k ActionKind) String() string {
	switch k {
	case ActionReply:
		return "reply"
	case ActionTool:
		return "tool"
	}
	return "unknown"
}

// ToolActuator is the name under which the tool runner is registered.
const ToolActuator = "tools"

// Action is what the LLM proposed (or the core wrote): a reply to a
// conversation or a tool call.
type Action struct {
	Kind ActionKind
	Conv Conversation
	// From is the identity whose message caused the action.
	From Identity
	// Text is the reply text (ActionReply).
	Text string
	// ReplyTo is the platform message id the reply answers; may be empty.
	ReplyTo string
	// Call is the tool call (ActionTool).
	Call llm.ToolCall
	// Approval, on a reply, marks it as an approval request: gateways that
	// have buttons render Approve/Deny for it.
	Approval *ApprovalPrompt
	// Resolution, on a reply, reports that an approval was resolved:
	// gateways that can edit messages update the request in place.
	Resolution *ApprovalResolution
}

// ApprovalPrompt is what a gateway needs to render approval buttons.
// Gateways must route a button press to the broker as the pressing identity;
// the token only correlates, it never authorises.
type ApprovalPrompt struct {
	Token       string
	Tool        string
	Summary     string // readable, shortened rendering of the arguments
	AllowAlways bool   // offer "Approve always"
	Expires     time.Time
}

// ApprovalResolution tells gateways what became of an approval request.
type ApprovalResolution struct {
	Token  string
	Status string // "approved", "denied", "expired", "executed", "failed"
	By     Identity
	At     time.Time
}

// Result is what an actuator returns.
type Result struct {
	// Output is the tool's output (already capped); empty for replies.
	Output string
	// Failed is true when the action ran but did not succeed (non-zero exit,
	// tool error); Output then explains it.
	Failed bool
}

// Actuator executes actions. Every gateway is the actuator for its own
// conversations (registered under its name); the tool runner is registered
// as ToolActuator.
type Actuator interface {
	Act(ctx context.Context, a Action) (Result, error)
}

// ActuatorFunc adapts a function to Actuator.
type ActuatorFunc func(ctx context.Context, a Action) (Result, error)

// Act calls f.
func (f ActuatorFunc) Act(ctx context.Context, a Action) (Result, error) { return f(ctx, a) }
