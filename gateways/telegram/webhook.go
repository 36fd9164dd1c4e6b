package telegram

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/gateways"
)

// secretHeader carries the webhook secret token on Telegram's requests.
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// webhookSubmitWait bounds how long a webhook request waits for a full
// queue; past it the request is refused and Telegram delivers it again.
const webhookSubmitWait = 10 * time.Second

// maxUpdateBody bounds a webhook request's body.
const maxUpdateBody = 1 << 20

// WebhookAddr is the address the webhook listener is bound to, "" when the
// gateway has none (polling mode, or Webhook.Listen empty).
func (g *Gateway) WebhookAddr() string {
	if g.listener == nil {
		return ""
	}
	return g.listener.Addr().String()
}

// Close releases the webhook listener of a gateway whose Run was never
// called (Run releases it itself when it returns).
func (g *Gateway) Close() error {
	if g.listener == nil || g.run.Load() != nil {
		return nil
	}
	return g.listener.Close()
}

// WebhookPath is the path Telegram posts to: the path of Webhook.PublicURL.
func (g *Gateway) WebhookPath() string {
	u, err := url.Parse(g.cfg.Webhook.PublicURL)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}

// WebhookHandler serves Telegram's webhook requests, for mounting on
// another server when Webhook.Listen is empty. Requests before Run starts
// are refused with 503 (Telegram retries them).
func (g *Gateway) WebhookHandler() http.Handler { return http.HandlerFunc(g.serveWebhook) }

// runWebhook registers the webhook, serves it until ctx ends, and returns.
func (g *Gateway) runWebhook(ctx context.Context) error {
	errc := make(chan error, 1)
	var srv *http.Server
	if g.listener != nil {
		mux := http.NewServeMux()
		mux.Handle(g.WebhookPath(), g.WebhookHandler())
		srv = gateways.NewHTTPServer(mux)
		go func() { errc <- srv.Serve(g.listener) }()
	}
	g.registerWebhook(ctx)
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	return nil
}

// registerWebhook calls setWebhook, retrying until it succeeds or ctx ends.
func (g *Gateway) registerWebhook(ctx context.Context) {
	params := tgbotapi.Params{
		"url": g.cfg.Webhook.PublicURL, "secret_token": g.cfg.Webhook.SecretToken,
		"max_connections": "1", // one at a time keeps each chat's order
	}
	_ = params.AddInterface("allowed_updates", allowedUpdates)
	for attempt := 0; ; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
		_, err := g.api(rctx).MakeRequest("setWebhook", params)
		cancel()
		if err == nil {
			g.log.Info().Str("path", g.WebhookPath()).Msg("webhook set")
			return
		}
		g.log.Error().Err(g.scrub(err)).Int("attempt", attempt+1).Msg("setWebhook failed; retrying")
		if gateways.Sleep(ctx, g.cfg.Backoff.Next(attempt)) != nil {
			return
		}
	}
}

// serveWebhook checks the secret, hands the update over and answers.
func (g *Gateway) serveWebhook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	got, want := r.Header.Get(secretHeader), g.cfg.Webhook.SecretToken
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		g.log.Warn().Str("remote", r.RemoteAddr).Msg("refused a webhook request with a wrong secret token")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	rs := g.run.Load()
	if rs == nil || rs.ctx.Err() != nil {
		http.Error(w, "not running", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUpdateBody))
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	w.WriteHeader(g.acceptUpdate(r.Context(), rs, body))
}

// acceptUpdate handles one webhook update and returns the HTTP status.
func (g *Gateway) acceptUpdate(reqCtx context.Context, rs *runState, body []byte) int {
	id, ok := updateID(body)
	if !ok {
		g.log.Warn().Msg("skipping a webhook update without an update_id")
		return http.StatusOK // a retry would not fix it
	}
	if !g.seen.add(id) {
		return http.StatusOK
	}
	ctx, cancel := context.WithTimeout(reqCtx, webhookSubmitWait)
	defer cancel()
	defer context.AfterFunc(rs.ctx, cancel)()
	g.hookMu.Lock() // one update at a time keeps each chat's order
	defer g.hookMu.Unlock()
	// Telegram counts a webhook update delivered once it is answered 200;
	// there is no offset to hold back, so Done is not needed.
	if _, err := g.handleRaw(ctx, rs.inbox, id, body, nil); err != nil {
		g.seen.forget(id)
		g.log.Warn().Int("update_id", id).Err(err).Msg("webhook update not handed over; Telegram will deliver it again")
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}
