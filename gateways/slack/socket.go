package slack

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// runSocket receives over Socket Mode until ctx ends. The library opens
// the connection (apps.connections.open), reconnects on disconnect
// envelopes, dropped sockets and missing pings; this loop acknowledges
// every envelope before it does anything else with it, and reconnects
// itself when the library gives up on an error other than a refused token.
func (g *Gateway) runSocket(ctx context.Context) error {
	sm := socketmode.New(g.api,
		socketmode.OptionDebug(false),
		socketmode.OptionLog(libLog{g}),
		socketmode.OptionPingInterval(g.cfg.PingInterval))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- g.keepConnected(ctx, sm) }()
	for {
		select {
		case err := <-errc:
			return err
		case evt := <-sm.Events:
			g.onSocketEvent(ctx, sm, evt)
		}
	}
}

// keepConnected runs the library's connection loop until ctx ends. It
// returns an error only for a token Slack refuses.
func (g *Gateway) keepConnected(ctx context.Context, sm *socketmode.Client) error {
	for attempt := 0; ; attempt++ {
		err := sm.RunContext(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if isAuthError(err) {
			return errors.New("slack: socket mode: Slack refused the app_token (invalid_auth): check gateways.slack.app_token")
		}
		g.log.Warn().Err(g.scrub(err)).Int("attempt", attempt+1).Msg("socket mode connection ended; connecting again")
		if gateways.Sleep(ctx, g.cfg.Backoff.Next(attempt)) != nil {
			return nil
		}
	}
}

// isAuthError reports Slack refusing a token.
func isAuthError(err error) bool {
	if err == nil {
		return false
	}
	switch err.Error() {
	case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "not_allowed_token_type":
		return true
	}
	var sc slack.StatusCodeError
	return errors.As(err, &sc) && sc.Code == 404
}

// onSocketEvent acknowledges an envelope at once, then handles it: events
// are queued for the engine, presses and slash commands resolved in the
// background. Malformed envelopes are acknowledged, logged and skipped.
// An events_api envelope that arrives while the store does not answer is
// neither acknowledged nor handled: Slack delivers it again (refuse).
func (g *Gateway) onSocketEvent(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	rs := g.run.Load()
	if evt.Type == socketmode.EventTypeEventsAPI && g.refuse(ctx, rs) {
		return
	}
	if evt.Request != nil && evt.Request.EnvelopeID != "" {
		g.ack(ctx, sm, evt.Request.EnvelopeID)
	}
	switch evt.Type {
	case socketmode.EventTypeConnected:
		if n := g.connects.Add(1); n > 1 {
			g.reconnected()
			g.log.Info().Uint64("reconnects", n-1).Msg("socket mode reconnected")
		} else {
			g.log.Info().Msg("socket mode connected")
		}
	case socketmode.EventTypeHello:
		g.up.Store(true)
	case socketmode.EventTypeDisconnect, socketmode.EventTypeConnecting:
		g.up.Store(false)
		g.log.Debug().Str("type", string(evt.Type)).Msg("socket mode event")
	case socketmode.EventTypeConnectionError:
		g.up.Store(false)
		if c, ok := evt.Data.(*slack.ConnectionErrorEvent); ok {
			g.log.Warn().Err(g.scrub(c.ErrorObj)).Int("attempt", c.Attempt).Dur("backoff", c.Backoff).Msg("socket mode connection failed; retrying")
		}
	case socketmode.EventTypeInvalidAuth:
		g.log.Error().Msg("socket mode: Slack refused the app token")
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		g.up.Store(false)
		g.log.Warn().Str("type", string(evt.Type)).Msg("socket mode connection error; the library reconnects")
	case socketmode.EventTypeErrorBadMessage:
		g.onBadMessage(ctx, sm, evt)
	case socketmode.EventTypeEventsAPI:
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok {
			g.log.Warn().Msg("skipping an events_api envelope without an event")
			return
		}
		g.onEventsAPI(rs, ev)
	case socketmode.EventTypeInteractive:
		cb, ok := evt.Data.(slack.InteractionCallback)
		if !ok {
			g.log.Warn().Msg("skipping an interactive envelope without a payload")
			return
		}
		g.onInteraction(rs, cb)
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slack.SlashCommand)
		if !ok {
			g.log.Warn().Msg("skipping a slash_commands envelope without a command")
			return
		}
		g.onSlash(rs, cmd)
	default:
		g.log.Debug().Str("type", string(evt.Type)).Msg("socket mode event")
	}
}

// ack acknowledges an envelope.
func (g *Gateway) ack(ctx context.Context, sm *socketmode.Client, id string) {
	if err := sm.AckCtx(ctx, id, nil); err != nil && ctx.Err() == nil {
		g.log.Warn().Str("envelope_id", id).Err(g.scrub(err)).Msg("cannot acknowledge an envelope")
	}
}

// onBadMessage acknowledges and skips an envelope the library could not
// parse (so Slack does not deliver it again and again).
func (g *Gateway) onBadMessage(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	bad, ok := evt.Data.(*socketmode.ErrorBadMessage)
	if !ok {
		g.log.Warn().Msg("skipping a malformed envelope")
		return
	}
	var env struct {
		EnvelopeID string `json:"envelope_id"`
		Type       string `json:"type"`
	}
	_ = json.Unmarshal(bad.Message, &env)
	if env.EnvelopeID != "" {
		g.ack(ctx, sm, env.EnvelopeID)
	}
	g.log.Warn().Str("envelope_id", textutil.Visible(env.EnvelopeID)).Str("type", textutil.Visible(env.Type)).Err(g.scrub(bad.Cause)).Msg("skipping a malformed envelope")
}

// libLog passes the library's own log lines (errors only: its debug
// output is off) to the gateway's log, secrets removed.
type libLog struct{ g *Gateway }

// Output logs s at debug level.
func (l libLog) Output(_ int, s string) error {
	l.g.log.Debug().Str("from", "slack-go").Msg(l.g.secrets.Redact(s))
	return nil
}
