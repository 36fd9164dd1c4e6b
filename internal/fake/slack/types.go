package slack

import (
	"encoding/json"
	"time"
)

// Post records a chat.postMessage call that Slack accepted.
type Post struct {
	Channel  string
	TS       string // the ts the fake gave the message
	Text     string
	Blocks   json.RawMessage // the blocks field as sent; nil when absent
	ThreadTS string
	Mrkdwn   string    // the mrkdwn field as sent ("" when absent)
	At       time.Time // when the request arrived, before the fake read it
}

// Buttons returns the buttons of the post's actions blocks, in order.
func (p Post) Buttons() []Button { return buttons(p.Blocks) }

// Update records a chat.update call that Slack accepted.
type Update struct {
	Channel string
	TS      string
	Text    string
	Blocks  json.RawMessage // nil when absent (the blocks are left as they were)
	// Parse is the parse field as sent: chat.update defaults to "client"
	// when it is absent, which turns a written @channel into a mention.
	Parse string
	At    time.Time // when the request arrived, before the fake read it
}

// Buttons returns the buttons of the update's actions blocks, in order.
func (u Update) Buttons() []Button { return buttons(u.Blocks) }

// Ephemeral records a chat.postEphemeral call that Slack accepted.
type Ephemeral struct {
	Channel  string
	User     string
	Text     string
	Blocks   json.RawMessage
	ThreadTS string
	At       time.Time // when the request arrived, before the fake read it
}

// ResponseURLPost records a POST to a response_url the fake handed out with
// an interaction or a slash command.
type ResponseURLPost struct {
	URL             string
	Text            string
	Blocks          json.RawMessage
	ThreadTS        string
	ResponseType    string // "ephemeral" or "in_channel"; "" when absent
	ReplaceOriginal bool
	DeleteOriginal  bool
	Body            json.RawMessage // the whole body
	At              time.Time       // when the request arrived, before the fake read it
}

// Message is the current state of a message the bot posted, after updates.
type Message struct {
	Channel  string
	TS       string
	Text     string
	Blocks   json.RawMessage
	ThreadTS string
	Edits    int // chat.update calls applied
}

// Buttons returns the buttons of the message's actions blocks, in order.
func (m Message) Buttons() []Button { return buttons(m.Blocks) }

// Button is a Block Kit button found in an actions block.
type Button struct {
	BlockID  string
	ActionID string
	Text     string
	Value    string
	Style    string
}

// Envelope records a Socket Mode envelope the fake wrote to a connection.
type Envelope struct {
	ID      string // envelope_id
	Type    string // "events_api", "interactive", "slash_commands"
	EventID string // event_id of an events_api envelope
	Attempt int    // retry_attempt: 0, or how many times Redeliver sent the event again
	Conn    int    // the connection it was written to (1 is the first)
	Sent    time.Time

	payload []byte
	retried bool // Redeliver sent it again
}

// Ack records a Socket Mode acknowledgement from the client.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // the ack's payload; nil when none
	// Delay is how long after the envelope was written the ack arrived;
	// zero when the envelope id is unknown.
	Delay time.Duration
	At    time.Time
}

// Event is a Slack event to inject (the "event" of an event_callback).
// Type defaults to "message"; ChannelType defaults from the channel id's
// first letter (D: "im", G: "group", otherwise "channel") for message
// events; TS and EventID are filled in when empty. Extra holds further
// fields verbatim ("message", "previous_message", "edited", "hidden", …).
type Event struct {
	Type        string
	Subtype     string
	Channel     string
	ChannelType string
	User        string
	BotID       string
	Text        string
	TS          string
	ThreadTS    string
	EventID     string
	// Files are shared in the message: its files, with upload true, and
	// for a user's message event subtype file_share unless Subtype is set.
	Files []File
	Extra map[string]json.RawMessage
}

// BlockAction is a button press to inject. MessageTS is the message carrying
// the button (a ts the bot posted: the fake includes its text and blocks);
// ThreadTS is that message's thread, when any. BlockID, when empty, is taken
// from the posted message's button with ActionID and Value.
type BlockAction struct {
	User      string
	Channel   string
	MessageTS string
	ThreadTS  string
	ActionID  string
	BlockID   string
	Value     string
}

// SlashCommand is a slash command to inject, such as /approve abc123.
type SlashCommand struct {
	Command string // with its slash: "/approve"
	Text    string
	User    string
	Channel string
}

// Fault is an injected failure of one Web API call.
type Fault int

// The faults FailNext can inject.
const (
	// FaultRateLimited answers 429 with a Retry-After header of
	// Options.RetryAfter seconds, as Slack does past a method's tier.
	FaultRateLimited Fault = iota + 1
	// FaultServer answers 500 with an HTML body, as Slack's edge does.
	FaultServer
	// FaultUnavailable answers 503 Service Unavailable.
	FaultUnavailable
	// FaultMalformed answers 200 with a body that is not valid JSON.
	FaultMalformed
	// FaultHang holds the call until Release (then it is answered
	// normally), Close or the client gives up (then 503).
	FaultHang
)
