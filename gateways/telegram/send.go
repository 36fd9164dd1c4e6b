package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// chunkLimit is the size replies are split to, in UTF-16 units: below
// Telegram's 4096, with room to spare. Rendering Markdown as HTML only
// shortens the visible text, and the plain-text fallback sends the chunk
// as it is.
const chunkLimit = 4000

// errFormatting marks an attempt whose HTML Telegram could not parse: the
// next attempt sends the chunk as plain text.
var errFormatting = errors.New("telegram refused the formatting")

// errMigrated marks an attempt refused because its group was upgraded to a
// supergroup: the next attempt goes to the supergroup.
var errMigrated = errors.New("telegram: the group was upgraded to a supergroup")

// newOutbox builds the gateway's delivery layer from its configuration.
func (g *Gateway) newOutbox() (*gateways.Outbox, error) {
	out, err := gateways.NewOutbox(gateways.OutboxConfig{
		Limit:    chunkLimit,
		Measure:  gateways.UTF16Len,
		Pace:     g.cfg.Pace,
		Backoff:  g.cfg.Backoff,
		RetryFor: g.cfg.RetryFor,
		Classify: g.classify,
		Log:      g.log,
		Metrics:  g.delivery,
		Shared:   g.shared,
		Sender:   g.sender(),
	})
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	return out, nil
}

// sender is the key of the bot's token among instances sharing a store
// ("telegram:<bot id>"); "" before the bot is known (tests).
func (g *Gateway) sender() string {
	if g.bot == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d", Name, g.bot.Self.ID)
}

// Act delivers an ActionReply: the text, split, rendered, paced and
// retried by the delivery layer. It returns an error when a chunk finally
// could not be delivered.
func (g *Gateway) Act(ctx context.Context, a core.Action) (core.Result, error) {
	if a.Kind != core.ActionReply {
		return core.Result{}, fmt.Errorf("telegram: cannot act on a %s action", a.Kind)
	}
	chat, err := chatID(a.Conv)
	if err != nil {
		return core.Result{}, err
	}
	if err := g.reply(ctx, chat, a, nil); err != nil {
		return core.Result{}, fmt.Errorf("telegram: reply to %s: %w", a.Conv.Key(), err)
	}
	return core.Result{}, nil
}

// PromptApproval sends the approval request text, followed by the typed-
// command hint, to conv with inline buttons for p on its last message,
// and remembers that message so UpdateApproval can edit it.
func (g *Gateway) PromptApproval(ctx context.Context, conv core.Conversation, text string, p core.ApprovalPrompt) error {
	chat, err := chatID(conv)
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		text = "Approval needed: " + p.Tool
	}
	a := core.Action{Kind: core.ActionReply, Conv: conv, Text: p.WithHint(text)}
	if err := g.reply(ctx, chat, a, &request{prompt: p, text: text}); err != nil {
		return fmt.Errorf("telegram: approval request to %s: %w", conv.Key(), err)
	}
	return nil
}

// request is an approval request being sent: its prompt, and its text
// without the hint (what the message shows once resolved).
type request struct {
	prompt core.ApprovalPrompt
	text   string
}

// chatID is conv's chat as Telegram's numeric id.
func chatID(conv core.Conversation) (int64, error) {
	chat, err := strconv.ParseInt(conv.Chat, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("telegram: conversation %s: bad chat id: %w", conv.Key(), err)
	}
	return chat, nil
}

// threadID is conv's forum topic as Telegram's message_thread_id, 0 when
// it has none.
func threadID(conv core.Conversation) (int, error) {
	if conv.Thread == "" {
		return 0, nil
	}
	thread, err := strconv.Atoi(conv.Thread)
	if err != nil || thread <= 0 {
		return 0, fmt.Errorf("telegram: conversation %s: bad topic id %q", conv.Key(), conv.Thread)
	}
	return thread, nil
}

// reply sends a's text through the delivery layer. Each chunk is rendered
// as HTML; if Telegram cannot parse the entities, the next attempt sends
// that chunk as plain text. With req, the last chunk carries the approval
// buttons and is remembered for the edit once the request is resolved.
func (g *Gateway) reply(ctx context.Context, chat int64, a core.Action, req *request) error {
	thread, err := threadID(a.Conv)
	if err != nil {
		return err
	}
	buttons := tgbotapi.NewMessage(chat, "") // holds the keyboard, built once for every attempt
	if req != nil {
		g.attachKeyboard(&buttons, req.prompt)
	}
	conv := a.Conv
	conv.Chat = strconv.FormatInt(chat, 10) // one pacing key per chat
	plain := false
	var late *core.ApprovalResolution
	_, err = g.out.Reply(ctx, conv, a.Text, func(ctx context.Context, c gateways.Chunk) (string, error) {
		to := g.follow(chat)
		msg := tgbotapi.NewMessage(to, renderHTML(c.Text))
		msg.ParseMode = tgbotapi.ModeHTML
		if plain {
			msg.Text, msg.ParseMode = c.Text, ""
		}
		if c.Index == 0 && a.ReplyTo != "" {
			msg.ReplyToMessageID, _ = strconv.Atoi(a.ReplyTo)
			msg.AllowSendingWithoutReply = true
		}
		if c.Last() {
			msg.ReplyMarkup = buttons.ReplyMarkup
		}
		m, err := g.sendText(ctx, msg, thread)
		if err != nil {
			if err := g.migrated(to, err); errors.Is(err, errMigrated) {
				return "", err
			}
			if !plain && isEntityError(err) {
				g.log.Warn().Int64("chat", chat).Err(err).Msg("Telegram refused the formatting; sending plain text")
				plain = true
				return "", fmt.Errorf("%w: %w", errFormatting, err)
			}
			return "", err
		}
		plain = false
		if c.Last() && req != nil {
			if r, ok := g.prompts.Add(req.prompt, promptRef{chat: to, msgID: m.MessageID, text: resolvedBody(req.text, c, msg.ParseMode), mode: msg.ParseMode}); ok {
				late = &r
			}
		}
		return strconv.Itoa(m.MessageID), nil
	})
	if late != nil {
		g.UpdateApproval(ctx, *late) // resolved while the request was being sent
	}
	return err
}

// send makes c, an edit of a message the gateway sent to chat, through the
// delivery layer: in order with the chat's replies, paced and retried. An
// edit that changes nothing counts as done.
func (g *Gateway) send(ctx context.Context, chat int64, c tgbotapi.Chattable) (tgbotapi.Message, error) {
	var m tgbotapi.Message
	conv := core.Conversation{Gateway: Name, Chat: strconv.FormatInt(chat, 10)}
	err := g.out.Edit(ctx, conv, func(ctx context.Context) error {
		var err error
		m, err = g.call(ctx, c)
		if isNotModified(err) {
			return nil
		}
		return err
	})
	return m, err
}

// follow returns the chat messages to chat go to: the supergroup it was
// upgraded to, once a refused send said so, else chat itself.
func (g *Gateway) follow(chat int64) int64 {
	if to, ok := g.moved.Load(chat); ok {
		return to.(int64)
	}
	return chat
}

// migrated returns err marked with errMigrated when it is Telegram's
// refusal of a request to chat because the group was upgraded to a
// supergroup (400 with migrate_to_chat_id), and remembers the supergroup
// for follow; any other err is returned as it is.
func (g *Gateway) migrated(chat int64, err error) error {
	var apiErr *tgbotapi.Error
	if !errors.As(err, &apiErr) || apiErr.MigrateToChatID == 0 || apiErr.MigrateToChatID == chat {
		return err
	}
	g.moved.Store(chat, apiErr.MigrateToChatID)
	g.log.Info().Int64("chat", chat).Int64("supergroup", apiErr.MigrateToChatID).Msg("the group was upgraded to a supergroup; sending there")
	return fmt.Errorf("%w: %w", errMigrated, err)
}

// classify tells the delivery layer what a failed request means: a 429
// with retry_after is a pause for the chat (Telegram does not say whether
// a global limit was hit; the global pacing keeps below it), a refused
// formatting is retried at once as plain text, a refused photo at once as
// a document, a send to a group upgraded
// to a supergroup at once to the supergroup, another 4xx is permanent,
// anything else (5xx, transport, a malformed answer) transient.
func (g *Gateway) classify(err error) gateways.Failure {
	var apiErr *tgbotapi.Error
	switch {
	case errors.Is(err, errFormatting), errors.Is(err, errMigrated), errors.Is(err, errPhoto):
		return gateways.Failure{Verdict: gateways.RetryAfter}
	case !errors.As(err, &apiErr) || apiErr.Code >= 500:
		return gateways.Failure{Verdict: gateways.Transient}
	case apiErr.Code == 429:
		if d := g.retryAfter(err); d > 0 {
			return gateways.Failure{Verdict: gateways.RetryAfter, After: d}
		}
		return gateways.Failure{Verdict: gateways.Transient}
	}
	return gateways.Failure{Verdict: gateways.Permanent}
}

// DeliveryStats returns the counters of the gateway's outbound delivery.
func (g *Gateway) DeliveryStats() gateways.DeliveryStats { return g.out.Stats() }

// call makes one request with the send timeout and a scrubbed error.
func (g *Gateway) call(ctx context.Context, c tgbotapi.Chattable) (tgbotapi.Message, error) {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	m, err := g.api(rctx).Send(c)
	return m, g.scrub(err)
}

// sendText sends msg like call, into forum topic thread unless it is 0.
// The library's configs have no message_thread_id, so such a request is
// made from msg's fields (those the gateway sets) and the topic.
func (g *Gateway) sendText(ctx context.Context, msg tgbotapi.MessageConfig, thread int) (tgbotapi.Message, error) {
	if thread == 0 {
		return g.call(ctx, msg)
	}
	p := tgbotapi.Params{"chat_id": strconv.FormatInt(msg.ChatID, 10), "text": msg.Text}
	p.AddNonEmpty("parse_mode", msg.ParseMode)
	p.AddNonZero("reply_to_message_id", msg.ReplyToMessageID)
	p.AddBool("allow_sending_without_reply", msg.AllowSendingWithoutReply)
	if err := p.AddInterface("reply_markup", msg.ReplyMarkup); err != nil {
		return tgbotapi.Message{}, fmt.Errorf("telegram: reply markup: %w", err)
	}
	var m tgbotapi.Message
	return m, g.callTopic(ctx, "sendMessage", p, thread, &m)
}

// callTopic makes one request of method with p in forum topic thread,
// with the send timeout and a scrubbed error, and decodes its result into
// out (when not nil).
func (g *Gateway) callTopic(ctx context.Context, method string, p tgbotapi.Params, thread int, out any) error {
	p.AddNonZero("message_thread_id", thread)
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	resp, err := g.api(rctx).MakeRequest(method, p)
	if err != nil {
		return g.scrub(err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("telegram: %s result: %w", method, err)
	}
	return nil
}

// isEntityError reports Telegram's refusal of a text's formatting.
func isEntityError(err error) bool {
	var apiErr *tgbotapi.Error
	return errors.As(err, &apiErr) && apiErr.Code == 400 &&
		strings.Contains(strings.ToLower(apiErr.Message), "can't parse entities")
}

// isEmptyError reports Telegram's refusal of a text with nothing to show
// once its formatting is parsed.
func isEmptyError(err error) bool {
	var apiErr *tgbotapi.Error
	return errors.As(err, &apiErr) && apiErr.Code == 400 &&
		strings.Contains(strings.ToLower(apiErr.Message), "message text is empty")
}

// isNotModified reports an edit that changed nothing.
func isNotModified(err error) bool {
	var apiErr *tgbotapi.Error
	return errors.As(err, &apiErr) && strings.Contains(apiErr.Message, "message is not modified")
}
