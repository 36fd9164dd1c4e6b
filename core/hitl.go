package core

import (
	"context"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// Held is an action a gate held for human approval.
type Held struct {
	Conv Conversation
	From Identity
	Call llm.ToolCall
	Rule string
	// Reason is why it was held (the gate's reason).
	Reason string
	// Note, when set, is a warning for the approval request: "no
	// checkpoint: …" when /undo could not take the call back.
	Note string
	// Again is set when the turn proposing the call was taken over from
	// an instance that stopped after the user's message was in the
	// history (a journaled turn): that run may have held the same call
	// before it died, and the model, asked again, proposes it again. A
	// Holder with a pending request of the conversation for the same call
	// by the same person raises no second one.
	Again bool
}

// ApprovalDecision is what an approval button means when pressed. It lives
// in core, not in gateways, so that hitl (which resolves presses) and the
// adapters (which draw the buttons) share it without importing each other.
// It is distinct from Decision, a gate's verdict.
type ApprovalDecision uint8

// The decisions an approval button can carry.
const (
	DecisionApprove ApprovalDecision = iota + 1
	DecisionDeny
	DecisionApproveAlways
	// DecisionApproveGrant approves and grants calls identical to this one
	// in the request's conversation for ButtonGrant ("Approve 30 min").
	DecisionApproveGrant
)

// ButtonGrant is how long the grant of the "Approve 30 min" button lasts.
const ButtonGrant = 30 * time.Minute

// Holder takes actions that need approval (the hitl broker implements it).
// Hold must not block on a human: it records the request, notifies, and
// returns the text the LLM sees as the tool result (never containing a token).
type Holder interface {
	Hold(ctx context.Context, h Held) (string, error)
}

// CommandHandler sees every authorised message in Submit, before the
// conversation's queue and the LLM, unless it is one of the Engine's own
// commands (/help, /status, …) or over Config.MaxMessage. It returns true
// when the message was a command it handled (it then never reaches the
// LLM); it replies through the Dispatcher itself. It runs on the
// submitting gateway's goroutine: it must not wait on a turn or a run.
type CommandHandler interface {
	HandleCommand(ctx context.Context, s Signal) bool
}

// Dispatcher is what the Engine offers to components outside the loop (the
// hitl broker): run an action through its actuator and feed a signal back in.
type Dispatcher interface {
	// Act dispatches a by actuator name: replies to Conv.Gateway, tool calls
	// to ToolActuator. Tool calls run through the tool runner directly,
	// without gates: the caller has already decided.
	Act(ctx context.Context, a Action) (Result, error)
	// Prompt sends the approval request text, with the buttons of p, to
	// conv: through PromptApproval when conv's gateway is an
	// ApprovalPrompter, else as a plain reply of p.WithHint(text), so a
	// gateway without buttons gets the typed commands. It returns an error
	// when the request was not delivered.
	Prompt(ctx context.Context, conv Conversation, text string, p ApprovalPrompt) error
	// Resolved tells conv's gateway that an approval was resolved: an
	// ApprovalUpdater updates the request messages it sent in place; any
	// other gateway is left alone. The outcome notice for people is a
	// separate reply (Act).
	Resolved(ctx context.Context, conv Conversation, r ApprovalResolution)
	// Submit queues a signal into its conversation.
	Submit(ctx context.Context, s Signal) error
}

// PromptFiles is an optional ability of a Dispatcher (the Engine has
// it): what the hitl broker needs to show a whole call that does not fit
// an approval request message.
type PromptFiles interface {
	// PromptRoom is how many runes an approval request to conv may take,
	// its reply hint included, and still show as one message on conv's
	// gateway; 0 when that gateway shows a request of any length whole
	// (a terminal).
	PromptRoom(conv Conversation) int
	// SendPromptFile sends f to conv, with the request it belongs to,
	// through conv's gateway's FileSender (the delivery layer). It returns
	// an error when the gateway cannot send files or f was not delivered.
	SendPromptFile(ctx context.Context, conv Conversation, f OutgoingFile) error
}

// CommandHelp describes one chat command for /help and for spotting near misses.
type CommandHelp struct {
	Name    string // without the slash: "approve"
	Args    string // "<token> [always]"; may be empty
	Summary string // one line
}

// CommandLister is implemented by a CommandHandler whose commands /help lists.
type CommandLister interface{ Commands() []CommandHelp }

// RunCanceller is implemented by a Holder that runs approved actions:
// CancelRuns cancels conv's running approved actions and returns how many.
type RunCanceller interface{ CancelRuns(conv Conversation) int }

// StatusReporter is implemented by a CommandHandler that adds lines about conv to /status.
type StatusReporter interface {
	StatusLines(ctx context.Context, conv Conversation) []string
}
