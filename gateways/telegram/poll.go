package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

// allowedUpdates are the update kinds the gateway asks for.
var allowedUpdates = []string{"message", "callback_query"}

// errStalled marks a poll the watchdog abandoned.
var errStalled = errors.New("telegram: getUpdates stalled past its timeout")

// runPolling long-polls getUpdates until ctx ends.
func (g *Gateway) runPolling(ctx context.Context, inbox gateways.Inbox) error {
	g.clearWebhook(ctx)
	offset := g.loadOffset(ctx)
	for attempt := 0; ctx.Err() == nil; {
		raws, err := g.fetch(ctx, offset)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if gateways.Sleep(ctx, g.pollFailed(err, attempt)) != nil {
				break
			}
			attempt++
			continue
		}
		attempt = 0
		if offset, err = g.deliverBatch(ctx, inbox, raws, offset); err != nil {
			break
		}
	}
	g.log.Info().Msg("stopped polling")
	return nil
}

// fetch makes one getUpdates request. The request's deadline is the
// watchdog: past the poll timeout plus StallMargin it is abandoned.
func (g *Gateway) fetch(ctx context.Context, offset int) ([]json.RawMessage, error) {
	secs := int((g.cfg.PollTimeout + time.Second - 1) / time.Second)
	pctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+g.cfg.StallMargin)
	defer cancel()
	resp, err := g.api(pctx).Request(tgbotapi.UpdateConfig{Offset: offset, Timeout: secs, AllowedUpdates: allowedUpdates})
	if err != nil {
		if ctx.Err() == nil && pctx.Err() != nil {
			return nil, errStalled
		}
		return nil, fmt.Errorf("telegram: getUpdates: %w", g.scrub(err))
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(resp.Result, &raws); err != nil {
		return nil, fmt.Errorf("telegram: getUpdates result: %w", err)
	}
	return raws, nil
}

// pollFailed logs a failed poll and returns how long to wait before the
// next one.
func (g *Gateway) pollFailed(err error, attempt int) time.Duration {
	var apiErr *tgbotapi.Error
	switch {
	case errors.Is(err, errStalled):
		g.log.Warn().Dur("timeout", g.cfg.PollTimeout).Msg("getUpdates stalled past its timeout; abandoned it and polling again")
		return 0
	case errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict:
		g.log.Error().Err(err).Msg("getUpdates conflict: another instance is polling or a webhook is set; retrying")
	case errors.As(err, &apiErr) && apiErr.Code == http.StatusUnauthorized:
		g.log.Error().Err(err).Msg("getUpdates: the bot token was rejected; retrying")
	case errors.As(err, &apiErr) && apiErr.RetryAfter > 0:
		g.log.Warn().Int("retry_after", apiErr.RetryAfter).Msg("getUpdates rate limited")
		return time.Duration(apiErr.RetryAfter) * g.cfg.RetryAfterUnit
	default:
		g.log.Warn().Err(err).Int("attempt", attempt+1).Msg("getUpdates failed; retrying")
	}
	return g.cfg.Backoff.Next(attempt)
}

// deliverBatch hands each new update to the inbox and moves the offset past
// it once handed over. It returns an error only when ctx ended.
func (g *Gateway) deliverBatch(ctx context.Context, inbox gateways.Inbox, raws []json.RawMessage, offset int) (int, error) {
	for _, raw := range raws {
		id, ok := updateID(raw)
		if !ok {
			g.log.Warn().Msg("skipping an update without an update_id")
			continue
		}
		if id < offset {
			continue
		}
		if err := g.handleRaw(ctx, inbox, id, raw); err != nil {
			return offset, err
		}
		offset = id + 1
		g.saveOffset(ctx, offset)
	}
	return offset, nil
}

// updateID reads an update's id without decoding the rest.
func updateID(raw []byte) (int, bool) {
	var head struct {
		UpdateID *int `json:"update_id"`
	}
	if json.Unmarshal(raw, &head) != nil || head.UpdateID == nil {
		return 0, false
	}
	return *head.UpdateID, true
}

func (g *Gateway) loadOffset(ctx context.Context) int {
	v, err := g.cursors.Cursor(ctx, g.offsetCursor())
	if err != nil {
		g.log.Warn().Err(err).Msg("cannot read the update offset; starting from Telegram's")
		return 0
	}
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		g.log.Warn().Str("offset", v).Msg("ignoring an unreadable update offset")
		return 0
	}
	return n
}

// saveOffset persists the offset even when ctx has just ended: the update
// before it was already handed over.
func (g *Gateway) saveOffset(ctx context.Context, offset int) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := g.cursors.SetCursor(sctx, g.offsetCursor(), strconv.Itoa(offset)); err != nil {
		g.log.Warn().Err(err).Int("offset", offset).Msg("cannot persist the update offset")
	}
}

// clearWebhook removes a webhook left from webhook mode: polling is what
// the configuration asks for, and getUpdates fails while one is set.
func (g *Gateway) clearWebhook(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	info, err := g.api(rctx).GetWebhookInfo()
	if err != nil {
		g.log.Warn().Err(g.scrub(err)).Msg("getWebhookInfo failed")
		return
	}
	if info.URL == "" {
		return
	}
	g.log.Warn().Msg("a webhook is set but the mode is polling: deleting the webhook")
	if _, err := g.api(rctx).Request(tgbotapi.DeleteWebhookConfig{}); err != nil {
		g.log.Error().Err(g.scrub(err)).Msg("deleteWebhook failed")
	}
}
