package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// notSupported answers content the gateway cannot read yet.
const notSupported = "Sorry, I can read text, photos, files, voice notes, audio and videos, but stickers, contacts, locations, polls and dice are not supported yet."

// handleRaw decodes one update and handles it. A malformed update is
// logged and skipped. It reports whether it submitted a signal (carrying
// done as its Done); it returns an error only when ctx ended before the
// update was handed over.
func (g *Gateway) handleRaw(ctx context.Context, inbox gateways.Inbox, id int, raw []byte, done func()) (bool, error) {
	var u tgbotapi.Update
	if err := json.Unmarshal(raw, &u); err != nil {
		g.log.Warn().Int("update_id", id).Err(g.scrub(err)).Msg("skipping a malformed update")
		return false, nil
	}
	switch {
	case u.Message != nil:
		return g.onMessage(ctx, inbox, id, u.Message, topicOf(raw), done)
	case u.CallbackQuery != nil:
		g.onCallback(id, u.CallbackQuery, topicOf(raw))
	default:
		g.log.Debug().Int("update_id", id).Msg("ignoring an update of another kind")
	}
	return false, nil
}

// topicOf returns the forum topic of an update's message, or of the
// message whose button a callback query pressed ("" when it is in none):
// the library's Message has no message_thread_id. An update without
// is_topic_message is not decoded a second time.
func topicOf(raw []byte) string {
	if !bytes.Contains(raw, []byte(`"is_topic_message"`)) {
		return ""
	}
	type message struct {
		ThreadID int  `json:"message_thread_id"`
		IsTopic  bool `json:"is_topic_message"`
	}
	var u struct {
		Message       *message `json:"message"`
		CallbackQuery *struct {
			Message *message `json:"message"`
		} `json:"callback_query"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return ""
	}
	m := u.Message
	if m == nil && u.CallbackQuery != nil {
		m = u.CallbackQuery.Message
	}
	if m == nil || !m.IsTopic || m.ThreadID <= 0 {
		return ""
	}
	return strconv.Itoa(m.ThreadID)
}

// onMessage normalises a message into a signal for inbox; a message in a
// forum topic is of the conversation chat:topic.
func (g *Gateway) onMessage(ctx context.Context, inbox gateways.Inbox, id int, m *tgbotapi.Message, topic string, done func()) (bool, error) {
	if m.Chat == nil || m.From == nil {
		g.log.Warn().Int("update_id", id).Msg("skipping a message without chat or sender")
		return false, nil
	}
	if m.Chat.IsChannel() {
		return false, nil
	}
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	if m.From.IsBot {
		if m.SenderChat != nil && !m.Chat.IsPrivate() {
			g.onAnonymous(id, m, text, entities, topic)
		}
		return false, nil
	}
	private := m.Chat.IsPrivate()
	addressed, text, other := g.addressed(m, text, entities)
	if !private && (other || g.cfg.Group == GroupMention && !addressed) {
		return false, nil
	}
	conv := core.Conversation{Gateway: Name, Chat: strconv.FormatInt(m.Chat.ID, 10), Thread: topic}
	var atts []core.Attachment
	if private || addressed { // a group's files only when the bot is addressed, even with group: all
		atts = g.attachments(m)
	}
	if strings.TrimSpace(text) == "" {
		if !private && !addressed { // not every photo or sticker in a group
			return false, nil
		}
		if len(atts) == 0 {
			if hasMedia(m) {
				g.replyLater(conv, notSupported, m.MessageID)
			}
			return false, nil
		}
	}
	err := inbox.Submit(ctx, core.Signal{
		Kind:        core.KindMessage,
		Conv:        conv,
		From:        identity(m.From.ID),
		Text:        text,
		Attachments: atts,
		MessageID:   strconv.Itoa(m.MessageID),
		Private:     private,
		At:          time.Unix(int64(m.Date), 0),
		Done:        done,
	})
	return err == nil, err
}

// anonymousNote answers a group message that addresses the bot but was
// posted on behalf of a chat: an admin who remains anonymous, or a linked
// channel. Telegram names no person, so nothing is done with it.
const anonymousNote = "You are posting anonymously (on behalf of the group or a channel), so I cannot tell who you are and did nothing with this message. Turn off \"Remain anonymous\" in the group's admin rights for yourself, then send it again."

// onAnonymous answers a group message sent on behalf of a chat (its
// sender is Telegram's GroupAnonymousBot or Channel_Bot) when it
// addresses this bot; before, such a message was dropped without a word,
// so an anonymous admin's /undo or /approve seemed never to be answered.
// The message itself is never a signal: it has no person to authorise.
func (g *Gateway) onAnonymous(id int, m *tgbotapi.Message, text string, entities []tgbotapi.MessageEntity, topic string) {
	addressed, _, other := g.addressed(m, text, entities)
	if !addressed || other {
		return
	}
	g.log.Info().Int("update_id", id).Int64("chat", m.Chat.ID).Msg("a message posted on behalf of a chat addresses the bot: answered, not handled")
	conv := core.Conversation{Gateway: Name, Chat: strconv.FormatInt(m.Chat.ID, 10), Thread: topic}
	g.replyLater(conv, anonymousNote, m.MessageID)
}

func identity(userID int64) core.Identity {
	return core.Identity(Name + ":" + strconv.FormatInt(userID, 10))
}

// hasMedia reports content other than text the gateway cannot read.
func hasMedia(m *tgbotapi.Message) bool {
	return m.Sticker != nil || m.Voice != nil || m.Audio != nil || m.Document != nil ||
		len(m.Photo) > 0 || m.Video != nil || m.VideoNote != nil || m.Animation != nil ||
		m.Contact != nil || m.Location != nil || m.Poll != nil || m.Dice != nil
}

// replyLater sends text to conv in the background.
func (g *Gateway) replyLater(conv core.Conversation, text string, replyTo int) {
	rs := g.run.Load()
	if rs == nil {
		return
	}
	g.goBackground(func() {
		a := core.Action{Kind: core.ActionReply, Conv: conv, Text: text, ReplyTo: strconv.Itoa(replyTo)}
		if _, err := g.Act(rs.ctx, a); err != nil {
			g.log.Error().Err(err).Str("conv", conv.Key()).Msg("reply failed")
		}
	})
}
