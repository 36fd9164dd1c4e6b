package telegram

import (
	"encoding/json"
	"time"
)

// User is a Telegram user as the Bot API sends it.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

// Chat is a Telegram chat. Type is "private", "group", "supergroup" or
// "channel".
type Chat struct {
	ID      int64  `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title,omitempty"`
	IsForum bool   `json:"is_forum,omitempty"` // a supergroup with topics (Server.Forum)
}

// Entity is a message entity; Offset and Length count UTF-16 code units.
type Entity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
	User   *User  `json:"user,omitempty"`
}

// Message is an incoming message to inject. MessageID and Date are filled
// in when zero. When Entities is nil, the fake adds the "mention" and
// "bot_command" entities Telegram would detect in Text (or CaptionEntities
// for Caption). Extra holds further fields verbatim ("sticker", "voice",
// "photo", "edit_date", …).
type Message struct {
	MessageID       int                        `json:"message_id"`
	From            *User                      `json:"from,omitempty"`
	Chat            Chat                       `json:"chat"`
	Date            int64                      `json:"date"`
	Text            string                     `json:"text,omitempty"`
	Entities        []Entity                   `json:"entities,omitempty"`
	Caption         string                     `json:"caption,omitempty"`
	CaptionEntities []Entity                   `json:"caption_entities,omitempty"`
	ReplyToMessage  *Message                   `json:"reply_to_message,omitempty"`
	Extra           map[string]json.RawMessage `json:"-"`
}

// MarshalJSON adds Extra's fields to the message object.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	b, err := json.Marshal(plain(m))
	if err != nil || len(m.Extra) == 0 {
		return b, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	for k, v := range m.Extra {
		fields[k] = v
	}
	return json.Marshal(fields)
}

// Callback is a button press to inject: From pressed a button carrying
// Data on the message MessageID in chat ChatID.
type Callback struct {
	From      User
	ChatID    int64
	MessageID int
	Data      string
}

// Button is one inline keyboard button.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
}

// Keyboard is an inline keyboard (reply_markup).
type Keyboard struct {
	InlineKeyboard [][]Button `json:"inline_keyboard"`
}

// Buttons returns the keyboard's buttons row by row, flattened.
func (k *Keyboard) Buttons() []Button {
	if k == nil {
		return nil
	}
	var out []Button
	for _, row := range k.InlineKeyboard {
		out = append(out, row...)
	}
	return out
}

// Sent records a message the bot sent or edited.
type Sent struct {
	Method    string // "sendMessage", "editMessageText", "editMessageReplyMarkup"
	ChatID    int64
	MessageID int
	Text      string // as sent (HTML source when ParseMode is "HTML")
	Plain     string // the text as a user sees it, entities parsed
	ParseMode string
	Markup    *Keyboard // decoded reply_markup; nil when none
	ReplyTo   int
	Thread    int       // message_thread_id: the forum topic; 0 when none
	At        time.Time // when the request arrived, before the fake read and handled it
}

// Answer records an answerCallbackQuery call.
type Answer struct {
	QueryID   string
	Text      string
	ShowAlert bool
}

// ChatAction records a sendChatAction call.
type ChatAction struct {
	ChatID int64
	Thread int // message_thread_id: the forum topic; 0 when none
	Action string
}

// Poll records a getUpdates request: its offset (0 when absent) and its
// timeout in seconds.
type Poll struct {
	Offset  int
	Timeout int
	Limit   int
}

// Fault is an injected failure of one request.
type Fault int

// The faults FailNext can inject.
const (
	// FaultTooMany answers 429 with parameters.retry_after (RetryAfter).
	FaultTooMany Fault = iota + 1
	// FaultServer answers 500 Internal Server Error.
	FaultServer
	// FaultConflict answers 409 Conflict as when another client polls.
	FaultConflict
	// FaultMalformed answers 200 with a body that is not valid JSON.
	FaultMalformed
	// FaultHang holds the request until Release, Close or the client gives up.
	FaultHang
)
