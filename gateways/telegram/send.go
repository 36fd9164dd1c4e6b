package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// chunkLimit is the size replies are split to, in UTF-16 units: below
// Telegram's 4096, with room to spare. Rendering Markdown as HTML only
// shortens the visible text, and the plain-text fallback sends the chunk
// as it is.
const chunkLimit = 4000

// maxRateLimited bounds the 429 answers one request may get before the
// gateway gives up on it.
const maxRateLimited = 20

// Act delivers an ActionReply: it edits the request message of a
// Resolution, then sends the text, split, rendered, paced and retried, with
// approval buttons on the last chunk when the reply is an approval request.
// It returns an error when a chunk finally could not be delivered.
func (g *Gateway) Act(ctx context.Context, a core.Action) (core.Result, error) {
	if a.Kind != core.ActionReply {
		return core.Result{}, fmt.Errorf("telegram: cannot act on a %s action", a.Kind)
	}
	chat, err := strconv.ParseInt(a.Conv.Chat, 10, 64)
	if err != nil {
		return core.Result{}, fmt.Errorf("telegram: conversation %s: bad chat id: %w", a.Conv.Key(), err)
	}
	if a.Resolution != nil {
		g.resolve(ctx, a.Resolution)
	}
	unlock, err := g.locks.lock(ctx, chat)
	if err != nil {
		return core.Result{}, fmt.Errorf("telegram: reply to %s: %w", a.Conv.Key(), err)
	}
	defer unlock()
	if err := g.reply(ctx, chat, a); err != nil {
		return core.Result{}, fmt.Errorf("telegram: reply to %s: %w", a.Conv.Key(), err)
	}
	return core.Result{}, nil
}

// reply sends a's text in chunks.
func (g *Gateway) reply(ctx context.Context, chat int64, a core.Action) error {
	chunks := splitReply(a.Text)
	if len(chunks) == 0 && a.Approval != nil {
		chunks = []string{"Approval needed: " + a.Approval.Tool}
	}
	for i, c := range chunks {
		msg := tgbotapi.NewMessage(chat, "")
		if i == 0 && a.ReplyTo != "" {
			msg.ReplyToMessageID, _ = strconv.Atoi(a.ReplyTo)
			msg.AllowSendingWithoutReply = true
		}
		last := i == len(chunks)-1
		if last && a.Approval != nil {
			g.attachKeyboard(&msg, a.Approval)
		}
		sent, err := g.sendChunk(ctx, msg, c)
		if err != nil {
			return fmt.Errorf("chunk %d of %d: %w", i+1, len(chunks), err)
		}
		if last && a.Approval != nil {
			g.prompts.add(a.Approval, promptRef{chat: chat, msgID: sent.id, text: sent.text, mode: sent.mode})
		}
	}
	return nil
}

// splitReply splits text into the chunks to send, dropping blank ones
// (Telegram refuses empty messages).
func splitReply(text string) []string {
	var out []string
	for _, c := range gateways.Split(text, chunkLimit, gateways.UTF16Len) {
		if strings.TrimSpace(c) != "" {
			out = append(out, c)
		}
	}
	return out
}

// sentChunk is what was finally sent for a chunk.
type sentChunk struct {
	id   int
	text string
	mode string
}

// sendChunk sends one Markdown chunk rendered as HTML; if Telegram cannot
// parse the entities, it sends the chunk again as plain text.
func (g *Gateway) sendChunk(ctx context.Context, msg tgbotapi.MessageConfig, md string) (sentChunk, error) {
	msg.Text, msg.ParseMode = renderHTML(md), tgbotapi.ModeHTML
	m, err := g.send(ctx, msg.ChatID, msg)
	if isEntityError(err) {
		g.log.Warn().Int64("chat", msg.ChatID).Err(err).Msg("Telegram refused the formatting; sending plain text")
		msg.Text, msg.ParseMode = md, ""
		m, err = g.send(ctx, msg.ChatID, msg)
	}
	if err != nil {
		return sentChunk{}, err
	}
	return sentChunk{id: m.MessageID, text: msg.Text, mode: msg.ParseMode}, nil
}

// send makes one API call for chat, paced, retried on 429 (after the
// pause Telegram asks for) and on transient errors (with backoff, for up to
// Config.RetryFor; the pauses of 429s do not count against it).
func (g *Gateway) send(ctx context.Context, chat int64, c tgbotapi.Chattable) (tgbotapi.Message, error) {
	key := strconv.FormatInt(chat, 10)
	var giveUp time.Time // set at the first transient error
	transient, limited := 0, 0
	for {
		if err := g.pacer.Wait(ctx, key); err != nil {
			return tgbotapi.Message{}, err
		}
		m, err := g.call(ctx, c)
		if err == nil {
			return m, nil
		}
		if ctx.Err() != nil {
			return m, ctx.Err()
		}
		var apiErr *tgbotapi.Error
		switch {
		case errors.As(err, &apiErr) && apiErr.Code == 429:
			if limited++; limited > maxRateLimited {
				return m, fmt.Errorf("rate limited %d times: %w", limited, err)
			}
			pause := g.retryAfter(apiErr, limited)
			g.pacer.Pause(key, pause)
			if !giveUp.IsZero() {
				giveUp = giveUp.Add(pause)
			}
			continue
		case errors.As(err, &apiErr) && apiErr.Code < 500:
			return m, err
		}
		now := time.Now()
		if giveUp.IsZero() {
			giveUp = now.Add(g.cfg.RetryFor)
		}
		if transient++; !now.Before(giveUp) {
			return m, fmt.Errorf("giving up after %d attempts over %s: %w", transient, g.cfg.RetryFor, err)
		}
		g.log.Debug().Err(err).Int("attempt", transient).Msg("send failed; retrying")
		if err := gateways.Sleep(ctx, min(g.cfg.Backoff.Next(transient-1), giveUp.Sub(now))); err != nil {
			return m, err
		}
	}
}

func (g *Gateway) retryAfter(e *tgbotapi.Error, n int) (d time.Duration) {
	if e.RetryAfter > 0 {
		return time.Duration(e.RetryAfter) * g.cfg.RetryAfterUnit
	}
	return g.cfg.Backoff.Next(n - 1)
}

// call makes one request with the send timeout and a scrubbed error.
func (g *Gateway) call(ctx context.Context, c tgbotapi.Chattable) (tgbotapi.Message, error) {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	m, err := g.api(rctx).Send(c)
	return m, g.scrub(err)
}

// isEntityError reports Telegram's refusal of a text's formatting.
func isEntityError(err error) bool {
	var apiErr *tgbotapi.Error
	return errors.As(err, &apiErr) && apiErr.Code == 400 &&
		strings.Contains(strings.ToLower(apiErr.Message), "can't parse entities")
}

// isNotModified reports an edit that changed nothing.
func isNotModified(err error) bool {
	var apiErr *tgbotapi.Error
	return errors.As(err, &apiErr) && strings.Contains(apiErr.Message, "message is not modified")
}
