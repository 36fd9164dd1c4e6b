package core

import "context"

// What a gateway can do beyond sending text is a small interface its
// actuator may implement, discovered by type assertion where it is needed.
// A gateway that implements none of them still gets everything as text: an
// approval request carries the typed commands, a resolution is a reply.
// The Engine's Prompt and Resolved (Dispatcher) make that choice for the
// hitl broker, which knows no gateway.

// Typer is an optional ability of a gateway actuator: show a typing indicator
// in conv until stop is called (or ctx ends). The Engine starts it when a turn
// begins and stops it when the turn ends.
type Typer interface {
	StartTyping(ctx context.Context, conv Conversation) (stop func())
}

// ApprovalPrompter is an optional ability of a gateway actuator: send an
// approval request with buttons for the decisions p offers. A press comes
// back to the broker (gateways.Approvals) as the identity that pressed; the
// token in a button only correlates, it never authorises.
type ApprovalPrompter interface {
	// PromptApproval sends text, the request the core wrote, to conv with
	// the buttons of p. p.Hint, the typed-command line, is not in text: a
	// gateway shows it while the request is open (p.WithHint(text)) and
	// leaves it out when UpdateApproval rewrites the resolved request. It
	// returns an error only when the request could not be delivered at all.
	PromptApproval(ctx context.Context, conv Conversation, text string, p ApprovalPrompt) error
}

// PromptSizer is an optional ability of a gateway actuator: how many
// runes of text one of its messages takes, with room to spare for its
// rendering (HTML entities, mrkdwn escapes), so that an approval request
// fits one message; 0 when the gateway shows text of any length whole (a
// terminal). A gateway without it is taken to show DefaultPromptRoom.
type PromptSizer interface {
	PromptRoom() int
}

// DefaultPromptRoom is the PromptRoom of a gateway that does not say.
const DefaultPromptRoom = 1800

// ApprovalUpdater is an optional ability of a gateway actuator that sent
// approval requests with buttons: once the approval is resolved it updates
// those request messages in place (the outcome shown, who resolved it and
// when, the buttons removed). Failures are the gateway's to log; the
// resolution notice is sent as a reply regardless.
type ApprovalUpdater interface {
	UpdateApproval(ctx context.Context, r ApprovalResolution)
}

// ReplyStreamer is an optional ability of a gateway actuator: show a reply
// while the model writes it, as a message edited in place. The Engine uses
// it only when the provider streams (it starts a live reply at the first
// streamed text); otherwise replies go through Act as always.
type ReplyStreamer interface {
	// StartLive starts a live reply to conv, in answer to the message
	// replyTo (may be empty). It returns false when this reply cannot be
	// shown live (e.g. the answer to a slash command): the Engine then
	// sends it with Act. The live reply's own work ends with ctx.
	StartLive(ctx context.Context, conv Conversation, replyTo string) (LiveReply, bool)
}

// LiveReply is one reply shown while it is written. The Engine calls
// Update with text the gates allowed, then exactly one of Finish and
// Abandon.
type LiveReply interface {
	// Update shows text, the whole reply so far; it does not wait for
	// the delivery.
	Update(text string)
	// Finish ends the reply with final, the text the gates allowed: once
	// it returns nil, what the conversation shows of the reply is what
	// Act would have sent for final. It returns an error when final
	// could not be delivered.
	Finish(ctx context.Context, final string) error
	// Abandon ends the reply without a final text: whatever was shown is
	// replaced by note (a short notice the core wrote).
	Abandon(ctx context.Context, note string)
}
