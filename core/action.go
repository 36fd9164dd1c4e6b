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
	// Escaped is true when Text was written by the core or the approval
	// broker with its untrusted parts (a call's arguments, tool output)
	// already made visible (textutil.Graphic): a gateway that escapes
	// control characters for a terminal must not escape its escapes again.
	Escaped bool
	// Call is the tool call (ActionTool).
	Call llm.ToolCall
	// Approval is the token of the approval that lets Call run (set by the
	// approval broker); empty for a call a rule allowed. A workspace
	// checkpoint records it: only approvers may undo an approved call.
	Approval string
}

// ApprovalPrompt is what a gateway needs to render approval buttons.
// Gateways must route a button press to the broker as the pressing identity;
// the token only correlates, it never authorises.
type ApprovalPrompt struct {
	Token   string
	Tool    string
	Summary string // readable, shortened rendering of the arguments
	// Hint is the one line that tells how to answer the request by typed
	// command ("Reply /approve K7Q2MX9P or /deny K7Q2MX9P …"). It is not
	// part of the request text: a gateway shows it after the text while
	// the request is open (WithHint) and leaves it out once it is resolved.
	Hint        string
	AllowAlways bool // offer "Approve always"
	AllowGrant  bool // offer "Approve 30 min" (core.DecisionApproveGrant)
	Expires     time.Time
	// NoButtons sends the request without buttons, as a plain reply of
	// WithHint(text): the whole call could not be shown with it, so it is
	// answered by typed command after /show.
	NoButtons bool
}

// WithHint returns the request text followed by p.Hint on a line of its
// own: the request as it reads while it is open, and all a gateway without
// buttons sends.
func (p ApprovalPrompt) WithHint(text string) string {
	switch {
	case p.Hint == "":
		return text
	case text == "":
		return p.Hint
	}
	return text + "\n" + p.Hint
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
