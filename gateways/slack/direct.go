package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
)

var _ core.DirectMessenger = (*Gateway)(nil)

// DirectConversation opens (conversations.open) the direct-message
// channel with id, a Slack user, within the send timeout.
func (g *Gateway) DirectConversation(ctx context.Context, id core.Identity) (core.Conversation, error) {
	user, ok := strings.CutPrefix(string(id), Name+":")
	if !ok || user == "" || len(user) > 32 || strings.ContainsAny(user, " ,:") {
		return core.Conversation{}, fmt.Errorf("slack: direct message: %q is no Slack user", id)
	}
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	ch, _, _, err := g.api.OpenConversationContext(rctx, &slack.OpenConversationParameters{Users: []string{user}})
	if err != nil {
		return core.Conversation{}, fmt.Errorf("slack: direct message to %s: %w", id, err)
	}
	if ch == nil || ch.ID == "" {
		return core.Conversation{}, fmt.Errorf("slack: direct message to %s: no channel in the answer", id)
	}
	return core.Conversation{Gateway: Name, Chat: ch.ID}, nil
}
