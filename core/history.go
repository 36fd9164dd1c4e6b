package core

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// History keeps what the LLM sees of each conversation, keyed by
// Conversation.Key. Implementations bound it (llm.Trim) so that Load always
// returns a valid sequence for the API.
type History interface {
	Load(ctx context.Context, conv string) ([]llm.Message, error)
	Append(ctx context.Context, conv string, msgs ...llm.Message) error
	// Reset forgets the conversation's messages (the /reset command).
	Reset(ctx context.Context, conv string) error
	// Replace makes msgs the conversation's whole history, atomically (the
	// Engine shortens a history the model found too long). msgs should
	// start at a user message; Load trims it as it trims appended ones.
	Replace(ctx context.Context, conv string, msgs []llm.Message) error
}

// UsageRecorder counts token usage per conversation.
type UsageRecorder interface {
	AddUsage(ctx context.Context, conv string, u llm.Usage) error
}

// MemoryHistory is an in-process History bounded to Max messages per
// conversation. It is the default when no store is configured.
type MemoryHistory struct {
	Max int

	mu    sync.Mutex
	convs map[string][]llm.Message
}

// NewMemoryHistory returns a MemoryHistory keeping at most max messages per
// conversation.
func NewMemoryHistory(max int) *MemoryHistory {
	return &MemoryHistory{Max: max, convs: make(map[string][]llm.Message)}
}

// Load returns a copy of the conversation's messages.
func (h *MemoryHistory) Load(_ context.Context, conv string) ([]llm.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	msgs := h.convs[conv]
	out := make([]llm.Message, len(msgs))
	copy(out, msgs)
	return out, nil
}

// Append adds messages and trims the conversation to Max.
func (h *MemoryHistory) Append(_ context.Context, conv string, msgs ...llm.Message) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.convs[conv] = llm.Trim(append(h.convs[conv], msgs...), h.Max)
	return nil
}

// Reset forgets the conversation's messages.
func (h *MemoryHistory) Reset(_ context.Context, conv string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.convs, conv)
	return nil
}

// Replace makes a copy of msgs the conversation's history, trimmed to Max.
func (h *MemoryHistory) Replace(_ context.Context, conv string, msgs []llm.Message) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.convs[conv] = llm.Trim(slices.Clone(msgs), h.Max)
	return nil
}

// notStored is the answer to s when its history write failed: the turn
// did not run.
func notStored(s Signal, err error) string {
	what := "your message"
	if s.Kind == KindApprovalOutcome {
		what = "the outcome above"
	}
	why := "(the bot's log has the details)"
	if errors.Is(err, ErrUnavailable) {
		why = "(my database does not answer)"
	}
	return "Sorry, I couldn't store " + what + " in this conversation's history " + why +
		", so I haven't answered it. Please try again in a moment."
}
