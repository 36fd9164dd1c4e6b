package tools

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/core"
)

// ConversationOf returns the conversation of the tool call ctx runs (set
// by Registry.Act), for a tool outside this package that answers per
// conversation (skills' skill tool).
func ConversationOf(ctx context.Context) (core.Conversation, bool) { return conversationOf(ctx) }
