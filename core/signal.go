package core

import "time"

// SignalKind tells what a Signal carries.
type SignalKind uint8

// The kinds of signal the Engine handles.
const (
	// KindMessage is a chat message from a person on a gateway.
	KindMessage SignalKind = iota + 1
	// KindApprovalOutcome reports what became of a held action (approved and
	// run, denied, expired); Text is the outcome written by the core for the LLM.
	KindApprovalOutcome
	// KindHeartbeat is a periodic wake-up with no text. Reserved: the
	// Engine accepts and ignores it; scheduled prompts are KindMessage
	// signals from a schedule's identity (see Signal.Schedule).
	KindHeartbeat
	// KindError reports a loop error in a conversation (e.g. a gateway that
	// could not deliver); Text describes it.
	KindError
)

func (k SignalKind) String() string {
	switch k {
	case KindMessage:
		return "message"
	case KindApprovalOutcome:
		return "approval_outcome"
	case KindHeartbeat:
		return "heartbeat"
	case KindError:
		return "error"
	}
	return "unknown"
}

// Signal is one normalised input to the core.
type Signal struct {
	Kind SignalKind
	Conv Conversation
	// From is who sent it; empty for signals the core made itself.
	From Identity
	Text string
	// Attachments are the files sent with the message (its Text is their
	// caption, and may be empty). They are fetched only once the sender
	// has passed the allow list.
	Attachments []Attachment
	// MessageID is the platform's id of the incoming message, for threading
	// replies; may be empty.
	MessageID string
	// Private is true for one-to-one chats (DMs, the local terminal).
	Private bool
	At      time.Time
	// Schedule names the configured schedule whose run this is; set only
	// by the scheduler (schedule), with From its
	// ScheduleIdentity. Such a message is admitted without an allow list:
	// the configuration is its authority. No gateway sets it (a test in
	// internal/archtest keeps it so): a gateway builds a Signal from a
	// platform update, whose text and ids fill Text, From and Conv, never
	// this field; and a platform user's identity always carries the
	// gateway's own name, never "schedule:".
	Schedule string
	// Webhook names the configured webhook whose verified delivery this
	// is; set only by webhooks, with From its WebhookIdentity, and, like
	// Schedule, admitted without an allow list (internal/archtest keeps
	// it so).
	Webhook string
	// Done, when set, is called once the Engine has finished with the
	// signal (its turn ran, or it was refused or was a command), or, on a
	// store shared by several instances, once the message is durably in
	// the inbox (Config.Journal), before its turn. It is not called for a
	// signal dropped at shutdown, nor when Submit fails, so a gateway that
	// commits its position in Done gets that message again after a restart.
	Done func()

	// journal is set on a journaled message's turn (RunJournaled).
	journal *journal
}
