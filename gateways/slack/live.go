package slack

import (
	"context"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

var _ core.ReplyStreamer = (*Gateway)(nil)

// StartLive implements core.ReplyStreamer: the reply is posted in the
// conversation's thread, then updated in place with chat.update as the
// model writes it, through the delivery layer (gateways.Live), each
// message converted to mrkdwn like a reply's chunk. The answer to a slash
// command is not shown live: only its user sees it, once written.
func (g *Gateway) StartLive(ctx context.Context, conv core.Conversation, replyTo string) (core.LiveReply, bool) {
	if conv.Chat == "" {
		return nil, false
	}
	if _, ok := g.slashes.get(replyTo); ok {
		return nil, false
	}
	return g.out.StartLive(ctx, conv, gateways.LiveFuncs{
		Send: func(ctx context.Context, text string, _ int) (string, error) {
			return g.post(ctx, conv, true, slack.MsgOptionText(toMrkdwn(text), false))
		},
		Edit: func(ctx context.Context, ts, text string) error {
			rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
			defer cancel()
			// parse=none: chat.update's default ("client") would turn a
			// written @channel into a mention; postMessage's is none.
			_, _, _, err := g.api.UpdateMessageContext(rctx, conv.Chat, ts, slack.MsgOptionText(toMrkdwn(text), false), slack.MsgOptionParse(false))
			return g.scrub(err)
		},
	}), true
}
