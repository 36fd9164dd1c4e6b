package discord

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

var _ core.ReplyStreamer = (*Gateway)(nil)

// StartLive implements core.ReplyStreamer: the reply is sent, then its
// message edited in place (PATCH channels/{channel}/messages/{id}) as the
// model writes it, through the delivery layer (gateways.Live). The answer
// to a slash command is not shown live: it answers the interaction, seen
// by its invoker only, once written.
func (g *Gateway) StartLive(ctx context.Context, conv core.Conversation, replyTo string) (core.LiveReply, bool) {
	if checkChannel(conv) != nil || g.slash.get(replyTo) != nil {
		return nil, false
	}
	channel := channelOf(conv)
	ref := g.reference(channel, replyTo)
	return g.out.StartLive(ctx, conv, gateways.LiveFuncs{
		Send: func(ctx context.Context, text string, index int) (string, error) {
			msg := &discordgo.MessageSend{Content: text, AllowedMentions: mentions()}
			if index == 0 {
				msg.Reference = ref
			}
			return g.send(ctx, channel, msg)
		},
		Edit: func(ctx context.Context, id, text string) error {
			edit := &discordgo.MessageEdit{ID: id, Channel: channel, Content: &text, AllowedMentions: mentions()}
			rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
			defer cancel()
			_, err := g.s.ChannelMessageEditComplex(edit, discordgo.WithContext(rctx))
			return g.scrub(err)
		},
	}), true
}
