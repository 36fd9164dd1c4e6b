package discord

import (
	"encoding/json"
	"time"
)

// User is a Discord user object. Discriminator is "0" (the new username
// system) when empty.
type User struct {
	ID            string `json:"id"`
	Username      string `json:"username"`
	Discriminator string `json:"discriminator"`
	GlobalName    string `json:"global_name,omitempty"`
	Bot           bool   `json:"bot,omitempty"`
}

// Member is a guild member object. In MESSAGE_CREATE it comes without User
// (the author is the user); in INTERACTION_CREATE it carries the user.
type Member struct {
	User        *User    `json:"user,omitempty"`
	Nick        string   `json:"nick,omitempty"`
	Roles       []string `json:"roles"`
	JoinedAt    string   `json:"joined_at"`
	Permissions string   `json:"permissions,omitempty"`
}

// Attachment is a file attached to a message.
type Attachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	Size        int    `json:"size"`
	URL         string `json:"url"`
	ContentType string `json:"content_type,omitempty"`
	// Data is what the fake's CDN serves at URL; Size is len(Data) when
	// zero (set it to announce another size). A URL set by the test is
	// left alone and not served by the fake.
	Data []byte `json:"-"`
}

// Message is an incoming message to inject (InjectMessage). ID is assigned
// when empty; GuildID empty means a DM. When Mentions is nil the fake
// mentions the users named as <@id> or <@!id> in Content (MentionRoles:
// <@&id>), and mention_everyone is set for @everyone and @here. ReplyTo is
// the id of the message it replies to (a message_reference plus the
// referenced_message when the fake knows it). Member defaults to a member
// without roles in guilds.
type Message struct {
	ID           string
	ChannelID    string
	GuildID      string
	Author       User
	Content      string
	Mentions     []User
	MentionRoles []string
	ReplyTo      string
	Attachments  []Attachment
	Member       *Member
	// Flags are the message's flags (8192: a voice message).
	Flags int
}

// Component is a message component: an action row (Type 1) holding
// buttons (Type 2) or other components.
type Component struct {
	Type       int             `json:"type"`
	Style      int             `json:"style,omitempty"`
	Label      string          `json:"label,omitempty"`
	CustomID   string          `json:"custom_id,omitempty"`
	URL        string          `json:"url,omitempty"`
	Disabled   bool            `json:"disabled,omitempty"`
	Emoji      json.RawMessage `json:"emoji,omitempty"`
	Components []Component     `json:"components,omitempty"`
}

// Buttons flattens action rows into their buttons, row by row.
func Buttons(rows []Component) []Component {
	var out []Component
	for _, r := range rows {
		out = append(out, r.Components...)
	}
	return out
}

// Reference is a message_reference: the message a reply refers to.
type Reference struct {
	MessageID       string `json:"message_id,omitempty"`
	ChannelID       string `json:"channel_id,omitempty"`
	GuildID         string `json:"guild_id,omitempty"`
	FailIfNotExists *bool  `json:"fail_if_not_exists,omitempty"`
}

// AllowedMentions is the allowed_mentions object of an outgoing message.
type AllowedMentions struct {
	Parse       []string `json:"parse"`
	Users       []string `json:"users,omitempty"`
	Roles       []string `json:"roles,omitempty"`
	RepliedUser bool     `json:"replied_user,omitempty"`
}

// How a bot message was created or edited.
const (
	ViaChannel     = "channel"     // POST or PATCH /channels/{c}/messages
	ViaInteraction = "interaction" // an interaction callback or PATCH …/messages/@original
	ViaFollowup    = "followup"    // POST /webhooks/{app}/{token}
)

// FlagEphemeral is the message flag of a reply only the presser sees.
const FlagEphemeral = 1 << 6

// Sent records a message the bot created.
type Sent struct {
	ID              string
	ChannelID       string
	GuildID         string // empty in DMs
	Content         string
	Reference       *Reference
	Components      []Component
	AllowedMentions *AllowedMentions
	Flags           int
	Via             string // ViaChannel, ViaInteraction or ViaFollowup
	Interaction     string // the interaction id for ViaInteraction and ViaFollowup
	At              time.Time
}

// Edit records an accepted edit of a message; Content and Components are
// the message's state after it.
type Edit struct {
	ChannelID     string
	MessageID     string
	Content       string
	Components    []Component
	ContentSet    bool // the edit changed content
	ComponentsSet bool // the edit changed components
	Via           string
	Interaction   string
	At            time.Time
}

// Typing records a POST /channels/{c}/typing.
type Typing struct {
	ChannelID string
	At        time.Time
}

// Interaction names an injected interaction: its id and token, the two
// path elements of its callback URL.
type Interaction struct {
	ID    string
	Token string
}

// Press is a button press to inject: User pressed the button carrying
// CustomID on MessageID in ChannelID (GuildID empty: a DM).
type Press struct {
	ChannelID string
	GuildID   string
	MessageID string
	User      User
	CustomID  string
}

// OptionValue is one option of an invoked slash command.
type OptionValue struct {
	Name  string `json:"name"`
	Type  int    `json:"type"`
	Value any    `json:"value"`
}

// SlashCommand is a slash command invocation to inject.
type SlashCommand struct {
	ChannelID string
	GuildID   string
	User      User
	Name      string
	Options   []OptionValue
}

// The interaction callback types the fake accepts.
const (
	CallbackMessage         = 4 // CHANNEL_MESSAGE_WITH_SOURCE
	CallbackDeferredMessage = 5 // DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE
	CallbackDeferredUpdate  = 6 // DEFERRED_UPDATE_MESSAGE (components only)
	CallbackUpdateMessage   = 7 // UPDATE_MESSAGE (components only)
)

// InteractionResponse records an interaction callback, accepted or not.
type InteractionResponse struct {
	InteractionID string
	Type          int
	Content       string
	Components    []Component
	Flags         int
	// After is the time from the interaction's dispatch to the callback's
	// arrival, on the fake's clock (Options.Now).
	After time.Duration
	// Code is 0 when accepted, else Discord's error code: 10062 (unknown
	// or expired interaction), 40060 (already acknowledged).
	Code int
}

// CommandOption is an option of a registered application command.
type CommandOption struct {
	Type        int             `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Required    bool            `json:"required,omitempty"`
	Choices     json.RawMessage `json:"choices,omitempty"`
	Options     []CommandOption `json:"options,omitempty"`
}

// Command is a registered application command.
type Command struct {
	ID            string          `json:"id"`
	ApplicationID string          `json:"application_id"`
	GuildID       string          `json:"guild_id,omitempty"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Type          int             `json:"type"`
	Options       []CommandOption `json:"options,omitempty"`
	Version       string          `json:"version"`
}

// Identify records an IDENTIFY (op 2) the gateway accepted.
type Identify struct {
	SessionID  string // the session READY started
	Intents    int
	Compress   bool
	Properties map[string]string
	At         time.Time
}

// Resume records a RESUME (op 6).
type Resume struct {
	SessionID string
	Seq       int64
	Replayed  int  // dispatches sent again
	OK        bool // false: answered INVALID_SESSION
}

// Gateway intents the fake honours.
const (
	IntentGuilds         = 1 << 0
	IntentGuildMessages  = 1 << 9
	IntentDirectMessages = 1 << 12
	IntentMessageContent = 1 << 15
)
