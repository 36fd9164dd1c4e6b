package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

var _ core.ThreadStarter = (*Gateway)(nil)

// maxTopicName is Telegram's longest forum topic name, in characters.
const maxTopicName = 128

// StartThread opens an incident's thread in conv's chat. In a chat with
// topics (a forum, as getChat says) it creates a forum topic named after
// text's first line, posts text there and returns the topic's
// conversation chat:topic, where a person's messages in the topic are
// keyed too. Elsewhere, or where Telegram refuses the topic for good
// (the bot lacks the Manage Topics right), it posts text in the chat and
// returns the chat with that message's id: the incident's later messages
// reply to it (a reply chain), and a person's reply to it reaches the bot. A conv with a
// topic already is returned as it is, nothing posted. The text is sent
// once (ReplyPrivate: never written to the shared outbox, whose
// resumption could post it again), as plain text.
func (g *Gateway) StartThread(ctx context.Context, conv core.Conversation, text string) (core.Conversation, string, error) {
	chat, err := chatID(conv)
	if err != nil {
		return core.Conversation{}, "", err
	}
	if conv.Thread != "" {
		return conv, "", nil
	}
	forum, err := g.isForum(ctx, chat)
	if err != nil {
		return core.Conversation{}, "", fmt.Errorf("telegram: start thread in %s: %w", conv.Key(), err)
	}
	thread := 0
	if forum {
		thread, err = g.createTopic(ctx, chat, gateways.ThreadName(text, maxTopicName))
		switch {
		case err != nil && g.classify(err).Verdict == gateways.Permanent:
			// Refused for good (no Manage Topics right): a reply chain in
			// the chat, rather than a failure at every retry.
			g.log.Warn().Err(err).Str("conv", conv.Key()).Msg("could not create a forum topic; the incident runs as a reply chain under its first message")
			forum = false
		case err != nil:
			return core.Conversation{}, "", fmt.Errorf("telegram: start thread in %s: %w", conv.Key(), err)
		}
	}
	ids, err := g.out.ReplyPrivate(ctx, conv, text, func(ctx context.Context, c gateways.Chunk) (string, error) {
		m, err := g.sendText(ctx, tgbotapi.NewMessage(g.follow(chat), c.Text), thread)
		if err != nil {
			return "", g.migrated(g.follow(chat), err)
		}
		return strconv.Itoa(m.MessageID), nil
	})
	if err != nil {
		return core.Conversation{}, "", fmt.Errorf("telegram: start thread in %s: %w", conv.Key(), err)
	}
	if forum {
		return core.Conversation{Gateway: Name, Chat: conv.Chat, Thread: strconv.Itoa(thread)}, "", nil
	}
	if len(ids) == 0 || ids[0] == "" {
		return core.Conversation{}, "", fmt.Errorf("telegram: start thread in %s: no message id", conv.Key())
	}
	return conv, ids[0], nil
}

// isForum asks Telegram (getChat) whether chat has topics.
func (g *Gateway) isForum(ctx context.Context, chat int64) (bool, error) {
	var c struct {
		IsForum bool `json:"is_forum"`
	}
	if err := g.callTopic(ctx, "getChat", tgbotapi.Params{"chat_id": strconv.FormatInt(g.follow(chat), 10)}, 0, &c); err != nil {
		return false, fmt.Errorf("getChat: %w", err)
	}
	return c.IsForum, nil
}

// createTopic creates a forum topic named name in chat and returns its
// message_thread_id.
func (g *Gateway) createTopic(ctx context.Context, chat int64, name string) (int, error) {
	var t struct {
		ThreadID int `json:"message_thread_id"`
	}
	p := tgbotapi.Params{"chat_id": strconv.FormatInt(g.follow(chat), 10), "name": name}
	if err := g.callTopic(ctx, "createForumTopic", p, 0, &t); err != nil {
		return 0, fmt.Errorf("createForumTopic: %w", err)
	}
	if t.ThreadID <= 0 {
		return 0, errors.New("createForumTopic: no message_thread_id in the answer")
	}
	return t.ThreadID, nil
}
