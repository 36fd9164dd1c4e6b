package slack

import (
	"context"
	"errors"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

var _ core.ThreadStarter = (*Gateway)(nil)

// StartThread posts text in conv's channel and returns the thread under
// that message (its ts), which the bot is then part of: a webhook's
// incident runs there. A conv that is a thread already is returned as it
// is, nothing posted. The text is sent once (ReplyPrivate: never written
// to the shared outbox, whose resumption could post it again as a second
// parent).
func (g *Gateway) StartThread(ctx context.Context, conv core.Conversation, text string) (core.Conversation, string, error) {
	if conv.Thread != "" {
		return conv, "", nil
	}
	if conv.Chat == "" {
		return core.Conversation{}, "", errors.New("slack: start thread: no channel")
	}
	ids, err := g.out.ReplyPrivate(ctx, conv, text, func(ctx context.Context, c gateways.Chunk) (string, error) {
		return g.post(ctx, conv, false, slack.MsgOptionText(toMrkdwn(c.Text), false))
	})
	if err != nil {
		return core.Conversation{}, "", fmt.Errorf("slack: start thread in %s: %w", conv.Key(), err)
	}
	if len(ids) == 0 || ids[0] == "" {
		return core.Conversation{}, "", fmt.Errorf("slack: start thread in %s: no message ts", conv.Key())
	}
	thread := core.Conversation{Gateway: conv.Gateway, Chat: conv.Chat, Thread: ids[0]}
	g.takePart(ctx, thread)
	return thread, "", nil
}
