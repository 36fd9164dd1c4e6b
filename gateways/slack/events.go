package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// maxRequestBody bounds an Events API request's body.
const maxRequestBody = 1 << 20

// The headers of a signed Slack request.
const (
	headerTimestamp = "X-Slack-Request-Timestamp"
	headerSignature = "X-Slack-Signature"
	headerRetryNum  = "X-Slack-Retry-Num"
)

// EventsAddr is the address the Events API listener is bound to, "" when
// the gateway has none (socket mode, or Listen empty).
func (g *Gateway) EventsAddr() string {
	if g.listener == nil {
		return ""
	}
	return g.listener.Addr().String()
}

// Close releases the listener of a gateway whose Run was never called
// (Run releases it itself when it returns).
func (g *Gateway) Close() error {
	if g.listener == nil || g.run.Load() != nil {
		return nil
	}
	return g.listener.Close()
}

// EventsHandler serves Slack's signed requests: Events API callbacks
// (JSON, url_verification included), interactivity (a form with a
// "payload" field) and slash commands (a form with a "command" field), all
// at one URL. Requests before Run starts are refused with 503 (Slack
// retries events).
func (g *Gateway) EventsHandler() http.Handler { return http.HandlerFunc(g.serveEvents) }

// runEvents serves the Events API on the gateway's own listener, when it
// has one, until ctx ends.
func (g *Gateway) runEvents(ctx context.Context) error {
	defer g.up.Store(false)
	if g.listener == nil {
		g.up.Store(true) // the host serves EventsHandler
		<-ctx.Done()
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+EventsPath, g.EventsHandler())
	srv := gateways.NewHTTPServer(mux)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(g.listener) }()
	g.up.Store(true) // the listener is bound: requests are accepted
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

// verify checks a request's signature (v0, HMAC-SHA256 of
// "v0:<timestamp>:<body>" keyed by the signing secret, compared in
// constant time) and that its timestamp is within maxSkew of now.
func verify(secret string, h http.Header, body []byte, now time.Time, maxSkew time.Duration) error {
	ts := h.Get(headerTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("no valid request timestamp")
	}
	if skew := now.Sub(time.Unix(sec, 0)); skew > maxSkew || skew < -maxSkew {
		return errors.New("request timestamp too old or in the future")
	}
	got, ok := strings.CutPrefix(h.Get(headerSignature), "v0=")
	sig, err := hex.DecodeString(got)
	if !ok || err != nil {
		return errors.New("no v0 signature")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return errors.New("signature does not match")
	}
	return nil
}

// serveEvents verifies a request, answers it at once and hands its work
// over.
func (g *Gateway) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	if err := verify(g.cfg.SigningSecret, r.Header, body, time.Now(), g.cfg.MaxSkew); err != nil {
		g.log.Warn().Str("remote", r.RemoteAddr).Str("reason", err.Error()).Msg("refused a Slack request that is not signed right")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		g.serveForm(w, body)
		return
	}
	var outer struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	if err := json.Unmarshal(body, &outer); err != nil {
		g.log.Warn().Err(err).Msg("skipping a malformed Events API request")
		w.WriteHeader(http.StatusOK) // a retry would not fix it
		return
	}
	if outer.Type == slackevents.URLVerification {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, outer.Challenge)
		return
	}
	rs := g.run.Load()
	if rs == nil || rs.ctx.Err() != nil {
		http.Error(w, "not running", http.StatusServiceUnavailable)
		return
	}
	ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
	if err != nil {
		g.log.Warn().Err(g.scrub(err)).Msg("skipping a malformed event")
		w.WriteHeader(http.StatusOK)
		return
	}
	if n := r.Header.Get(headerRetryNum); n != "" {
		g.log.Debug().Str("retry", textutil.Visible(n)).Str("reason", textutil.Visible(r.Header.Get("X-Slack-Retry-Reason"))).Msg("Slack delivered an event again")
	}
	if g.refuse(r.Context(), rs) {
		// Not a 2xx: Slack delivers the event again later.
		http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
		return
	}
	// Within Slack's 3 s, and sent whole before the work, which may ask
	// Slack about a thread (conversations.replies) first.
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush() //nolint:errcheck // the answer is complete either way
	g.onEventsAPI(rs, ev)
}

// serveForm handles an interactivity payload or a slash command.
func (g *Gateway) serveForm(w http.ResponseWriter, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		g.log.Warn().Err(err).Msg("skipping a malformed form request")
		w.WriteHeader(http.StatusOK)
		return
	}
	rs := g.run.Load()
	if rs == nil || rs.ctx.Err() != nil {
		http.Error(w, "not running", http.StatusServiceUnavailable)
		return
	}
	if payload := form.Get("payload"); payload != "" {
		var cb slack.InteractionCallback
		if err := json.Unmarshal([]byte(payload), &cb); err != nil {
			g.log.Warn().Err(err).Msg("skipping a malformed interactivity payload")
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusOK)
		g.onInteraction(rs, cb)
		return
	}
	if form.Get("command") == "" {
		g.log.Warn().Msg("skipping a form request that is neither an interaction nor a slash command")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusOK) // an empty answer: the reply comes through response_url
	g.onSlash(rs, slack.SlashCommand{
		Command: form.Get("command"), Text: form.Get("text"), UserID: form.Get("user_id"),
		ChannelID: form.Get("channel_id"), ResponseURL: form.Get("response_url"), TeamID: form.Get("team_id"),
	})
}
