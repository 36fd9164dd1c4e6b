package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/startup"
)

// allowedUpdates are the update kinds the gateway asks for.
var allowedUpdates = []string{"message", "callback_query"}

// storeRetryMax caps the wait before updates refused because the store
// does not answer are fetched and handed over again.
const storeRetryMax = 5 * time.Second

// errStalled marks a poll the watchdog abandoned.
var errStalled = errors.New("telegram: getUpdates stalled past its timeout")

// runPolling long-polls getUpdates until ctx ends. The offset it polls
// with moves past an update only once the update is done (see offsets).
// The first poll, and the first after a failed one, is short (timeout 0):
// Telegram answers it at once, so the gateway is ready (Ready) as soon as
// Telegram answers again, not a whole quiet long poll later. A long poll
// answered with nothing before Config.PollFloor has passed is followed by
// a wait until it has, so an endpoint that does not hold long polls is not
// polled in a tight loop.
func (g *Gateway) runPolling(ctx context.Context, inbox gateways.Inbox) error {
	o := g.loadOffsets(ctx)
	startup.Mark(ctx, "telegram: update offset read")
	if g.handOverParked(ctx, inbox, o) != nil {
		g.log.Info().Msg("stopped polling")
		return nil
	}
	short := true
	refused := 0            // batches refused in a row because the store is unreachable
	webhookChecked := false // a conflict was looked into once for a webhook left set
	var buf bytes.Buffer    // each answer, read in place until the next poll
	for attempt := 0; ctx.Err() == nil; {
		offset, moved := o.next()
		timeout := g.cfg.PollTimeout
		if short {
			timeout = 0
		}
		began := time.Now()
		startup.Ready(ctx, "telegram: first getUpdates sent")
		raws, err := g.fetch(ctx, &buf, offset, timeout)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			// A webhook left from webhook mode makes getUpdates a conflict:
			// looked for then, not before every start's first poll.
			if !webhookChecked && isConflict(err) {
				webhookChecked = true
				if g.clearWebhook(ctx) {
					continue
				}
			}
			g.reconnected()
			if gateways.Sleep(ctx, g.pollFailed(err, attempt)) != nil {
				break
			}
			attempt++
			short = true
			continue
		}
		attempt, short = 0, false
		g.lastPoll.Store(time.Now().UnixNano())
		fresh, err := g.deliverBatch(ctx, inbox, o, raws)
		if gateways.Unavailable(err) {
			// Nothing is confirmed: Telegram keeps the update, and the
			// next poll (short) brings it again once the store answers.
			if refused == 0 {
				g.log.Warn().Err(err).Msg("the store does not answer: updates are left with Telegram until it does")
			}
			if gateways.Sleep(ctx, min(g.cfg.Backoff.Next(refused), storeRetryMax)) != nil {
				break
			}
			refused++
			short = true
			continue
		}
		if err != nil {
			break
		}
		if refused > 0 && fresh > 0 {
			g.log.Info().Int("refused", refused).Msg("the store answers again: taking updates")
			refused = 0
		}
		if fresh == 0 && len(raws) > 0 && g.awaitProgress(ctx, moved) != nil {
			break
		}
		if len(raws) == 0 && timeout > 0 && gateways.Sleep(ctx, g.cfg.PollFloor-time.Since(began)) != nil {
			break
		}
	}
	g.log.Info().Msg("stopped polling")
	return nil
}

// awaitProgress waits, when Telegram holds only updates still in progress
// (it would answer the next poll at once with the same), until one of them
// is done or Config.RepollEvery has passed, so new updates are still seen.
func (g *Gateway) awaitProgress(ctx context.Context, moved <-chan struct{}) error {
	t := time.NewTimer(g.cfg.RepollEvery)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-moved:
	case <-t.C:
	}
	return nil
}

// ReportsReceiving reports whether Run says when it first receives
// (startup.Ready): in polling mode, before its first getUpdates, or before
// it waits for the receiver lease.
func (g *Gateway) ReportsReceiving() bool { return g.cfg.Mode != ModeWebhook }

// fetch makes one getUpdates request that Telegram may hold for timeout
// (rounded up to whole seconds; 0 answers at once). The request's deadline
// is the watchdog: past the timeout plus StallMargin it is abandoned. The
// updates are slices of buf, valid until the next fetch.
func (g *Gateway) fetch(ctx context.Context, buf *bytes.Buffer, offset int, timeout time.Duration) ([][]byte, error) {
	secs := int((timeout + time.Second - 1) / time.Second)
	pctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+g.cfg.StallMargin)
	defer cancel()
	result, err := g.getUpdates(pctx, buf, offset, secs)
	if err != nil {
		if ctx.Err() == nil && pctx.Err() != nil {
			return nil, errStalled
		}
		return nil, fmt.Errorf("telegram: getUpdates: %w", g.scrub(err))
	}
	raws, err := decodeBatch(result)
	if err != nil {
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
	case isConflict(err):
		g.log.Error().Err(err).Msg("getUpdates conflict: another instance is polling or a webhook is set; retrying")
	case errors.As(err, &apiErr) && apiErr.Code == http.StatusUnauthorized:
		g.log.Error().Err(err).Msg("getUpdates: the bot token was rejected; retrying")
	case errors.As(err, &apiErr) && apiErr.RetryAfter > 0:
		wait := time.Duration(apiErr.RetryAfter) * g.cfg.RetryAfterUnit
		g.log.Warn().Dur("retry_after", wait).Msg("getUpdates rate limited") // was a bare count of seconds
		return wait
	default:
		g.log.Warn().Err(err).Int("attempt", attempt+1).Msg("getUpdates failed; retrying")
	}
	return g.cfg.Backoff.Next(attempt)
}

// deliverBatch hands each update not handed over before to the inbox, and
// returns how many it handed over. An update is done when the engine calls
// its signal's Done, or at once when it produced no signal. It returns an
// error only when ctx ended; the update then stays in progress, so it is
// delivered again after a restart.
//
// The offset is saved once the batch is handed over, not as each of its
// updates is done meanwhile: a message a shared store's inbox took is done
// as it is handed over, and one write per batch rather than per message
// spares the store (a crash before the save fetches the batch again, and
// the inbox takes a message it has once). An update done after the batch
// (a turn run in memory) saves it then.
//
// Updates given up on to keep within maxHeld are warned about once per
// batch, naming them all: in a burst over many chats one is given up on
// for nearly every update handed over, and a line each was a third of the
// bot's log lines (and of what logging cost) in the bench's burst.
func (g *Gateway) deliverBatch(ctx context.Context, inbox gateways.Inbox, o *offsets, raws [][]byte) (int, error) {
	var handing atomic.Bool
	handing.Store(true)
	var released []int
	defer func() {
		// Parked before any save: a done update's save (once handing
		// ends) persists an offset past those given up.
		lost := g.park(ctx, o, raws)
		handing.Store(false)
		g.saveOffsets(ctx, o)
		if len(lost) > 0 {
			g.log.Warn().Ints("update_ids", lost).Int("held", maxHeld).Int("parked", maxParked).
				Msg("updates still in progress after many later ones: confirmed to Telegram anyway, not parked; a crash now would lose them")
		} else if len(released) > 0 {
			g.log.Debug().Ints("update_ids", released).Msg("updates still in progress after many later ones: parked in the store until done")
		}
	}()
	fresh := 0
	for _, raw := range raws {
		id, ok := batchUpdateID(raw)
		if !ok {
			g.log.Warn().Msg("skipping an update without an update_id")
			continue
		}
		if o.seen(id) {
			o.pass(id)
			continue
		}
		fresh++
		released = append(released, o.start(id)...)
		done := func() {
			if o.finish(id) {
				g.unpark(ctx, id)
			}
			if !handing.Load() {
				g.saveOffsets(ctx, o)
			}
		}
		submitted, err := g.handleRaw(ctx, inbox, id, raw, done)
		if gateways.Unavailable(err) {
			o.unstart(id)
			return fresh - 1, err
		}
		if err != nil {
			return fresh, err
		}
		if !submitted {
			o.finish(id)
		}
	}
	return fresh, nil
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

// loadOffsets reads the persisted offset and the updates done above it.
func (g *Gateway) loadOffsets(ctx context.Context) *offsets {
	v, err := g.cursors.Cursor(ctx, g.offsetCursor())
	if err != nil {
		g.log.Warn().Err(err).Msg("cannot read the update offset; starting from Telegram's")
		return newOffsets(0, nil)
	}
	if v == "" {
		return newOffsets(0, nil)
	}
	base, done, err := parseOffsets(v)
	if err != nil {
		g.log.Warn().Err(err).Msg("ignoring an unreadable update offset")
		return newOffsets(0, nil)
	}
	return newOffsets(base, done)
}

// saveOffsets persists o when it changed, even when ctx has just ended: an
// update done is done. Saves are serialised, so the last one written is
// the newest.
func (g *Gateway) saveOffsets(ctx context.Context, o *offsets) {
	g.saveMu.Lock()
	defer g.saveMu.Unlock()
	v := o.value()
	if v == g.saved {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := g.cursors.SetCursor(sctx, g.offsetCursor(), v); err != nil {
		g.log.Warn().Err(err).Str("offset", v).Msg("cannot persist the update offset")
		return
	}
	g.saved = v
}

// isConflict reports whether err is Telegram's 409: a webhook is set, or
// another process polls the same token.
func isConflict(err error) bool {
	var apiErr *tgbotapi.Error
	return errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict
}

// clearWebhook removes a webhook left from webhook mode: polling is what
// the configuration asks for, and getUpdates fails while one is set. It
// reports whether it removed one.
func (g *Gateway) clearWebhook(ctx context.Context) bool {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	info, err := g.api(rctx).GetWebhookInfo()
	if err != nil {
		g.log.Warn().Err(g.scrub(err)).Msg("getWebhookInfo failed")
		return false
	}
	if info.URL == "" {
		return false
	}
	g.log.Warn().Msg("a webhook is set but the mode is polling: deleting the webhook")
	if _, err := g.api(rctx).Request(tgbotapi.DeleteWebhookConfig{}); err != nil {
		g.log.Error().Err(g.scrub(err)).Msg("deleteWebhook failed")
		return false
	}
	return true
}
