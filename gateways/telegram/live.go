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

var _ core.ReplyStreamer = (*Gateway)(nil)

// StartLive implements core.ReplyStreamer: the reply is sent, then edited
// in place with editMessageText as the model writes it, through the
// delivery layer (gateways.Live). Each message is rendered as HTML like a
// reply's chunk, falling back to plain text when Telegram refuses the
// formatting of a half-written text, or finds it empty (a code block
// whose fence line came before its code).
func (g *Gateway) StartLive(ctx context.Context, conv core.Conversation, replyTo string) (core.LiveReply, bool) {
	chat, err := chatID(conv)
	if err != nil {
		return nil, false
	}
	thread, err := threadID(conv)
	if err != nil {
		return nil, false
	}
	conv.Chat = strconv.FormatInt(chat, 10) // one pacing key per chat
	plain := false                          // the worker of the live reply is its only user
	// render is text as a message's body and parse mode: HTML unless the
	// last attempt's formatting was refused.
	render := func(text string) (string, string) {
		if plain {
			return text, ""
		}
		return renderHTML(text), tgbotapi.ModeHTML
	}
	// settle turns a refused formatting, or an HTML text Telegram finds
	// empty, into a retry in plain text.
	settle := func(err error) error {
		if err != nil && !plain && (isEntityError(err) || isEmptyError(err)) {
			plain = true
			return fmt.Errorf("%w: %w", errFormatting, err)
		}
		if err == nil {
			plain = false
		}
		return err
	}
	return g.out.StartLive(ctx, conv, gateways.LiveFuncs{
		Send: func(ctx context.Context, text string, index int) (string, error) {
			to := g.follow(chat)
			msg := tgbotapi.NewMessage(to, "")
			msg.Text, msg.ParseMode = render(text)
			if index == 0 && replyTo != "" {
				msg.ReplyToMessageID, _ = strconv.Atoi(replyTo)
				msg.AllowSendingWithoutReply = true
			}
			m, err := g.sendText(ctx, msg, thread)
			if err := g.migrated(to, err); errors.Is(err, errMigrated) {
				return "", err
			}
			if err := settle(err); err != nil {
				return "", err
			}
			return strconv.Itoa(m.MessageID), nil
		},
		Edit: func(ctx context.Context, id, text string) error {
			msgID, err := strconv.Atoi(id)
			if err != nil {
				return fmt.Errorf("telegram: live reply: bad message id %q", id)
			}
			edit := tgbotapi.NewEditMessageText(g.follow(chat), msgID, "") // where Send sent it
			edit.Text, edit.ParseMode = render(text)
			_, err = g.call(ctx, edit)
			if isNotModified(err) {
				err = nil
			}
			return settle(err)
		},
	}), true
}
