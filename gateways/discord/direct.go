package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
)

var _ core.DirectMessenger = (*Gateway)(nil)

// DirectConversation opens (POST /users/@me/channels; Discord answers
// the same channel every time) the direct-message channel with id, a
// Discord user, within the send timeout.
func (g *Gateway) DirectConversation(ctx context.Context, id core.Identity) (core.Conversation, error) {
	user, ok := strings.CutPrefix(string(id), Name+":")
	if !ok || !snowflake(user) {
		return core.Conversation{}, fmt.Errorf("discord: direct message: %q is no Discord user", id)
	}
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	ch, err := g.s.UserChannelCreate(user, discordgo.WithContext(rctx))
	if err != nil {
		return core.Conversation{}, fmt.Errorf("discord: direct message to %s: %w", id, g.scrub(err))
	}
	if ch == nil || ch.ID == "" {
		return core.Conversation{}, fmt.Errorf("discord: direct message to %s: no channel in the answer", id)
	}
	return core.Conversation{Gateway: Name, Chat: ch.ID}, nil
}
