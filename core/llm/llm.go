// Package llm declares the reasoning provider interface and its message types,
// with an OpenAI-compatible implementation, a cascade over providers and an
// offline demo model.
package llm

import (
	"context"
	"errors"
	"math"
)

// Role is a chat message's author role, as in the OpenAI API.
type Role string

// The roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation's history.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message proposes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Images go with a user message to a provider with vision (see
	// OpenAIConfig.Vision); other providers leave them out. They are never
	// stored: a history keeps Content, which names the saved files.
	Images []Image `json:"-"`
}

// Image is an image sent to a model with vision: its bytes and their
// media type (image/jpeg, image/png, image/webp or image/gif).
type Image struct {
	MediaType string
	Data      []byte
}

// ToolCall is one proposed tool invocation.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Args is the arguments object as JSON text, exactly as the model sent it.
	Args string `json:"args"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object.
	Parameters []byte
}

// Request is one completion request.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
	// Sink, when not nil, is told the answer's text while a streamed
	// completion arrives. Providers that do not stream never call it.
	Sink TextSink
}

// TextSink receives the text of a streamed answer as it arrives. Its
// methods are called from the goroutine that called Complete, before
// Complete returns, and must not block for long.
type TextSink interface {
	// Text is the whole text of the answer so far; each call extends the
	// previous one (until Discard).
	Text(soFar string)
	// Discard says the text given so far is void: the provider failed
	// and another is about to be asked. Text starts again from nothing.
	// When no other is asked, Complete returns an error instead.
	Discard()
}

// Usage counts tokens of one completion, and what they cost.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// CostUSD is what the request cost at the configured price of the
	// provider that answered it; 0 when that provider has no price. A
	// provider leaves it 0: the budget's pricing wrapper sets it.
	CostUSD float64
}

// SummedCost is u.CostUSD, a sum of recorded costs, rounded to a billionth
// of a dollar: costs added in floating point drift below their decimal
// total (ten $0.10 add up to 0.9999999999999999), which would let a cap of
// exactly that total pass and show a used amount a hair under it.
func (u Usage) SummedCost() float64 { return math.Round(u.CostUSD*1e9) / 1e9 }

// Response is the model's answer: an assistant message with text, tool
// calls, or both.
type Response struct {
	Message  Message
	Usage    Usage
	Provider string // name of the provider that answered
}

// Provider proposes the next assistant message.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// ErrRetryable marks transient provider errors — transport errors,
// timeouts, 429 and 5xx — that may succeed if tried again later. The
// Cascade falls through to the next provider on any error, transient or
// not (except ErrContextTooLong): another provider may well answer what
// this one refused.
var ErrRetryable = errors.New("llm: retryable")
