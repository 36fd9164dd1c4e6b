package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
	"github.com/gatehouse-bot/gatehouse/gateways/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/config"
)

// buildGateways constructs every enabled gateway and registers each as the
// actuator for its conversations.
func (a *App) buildGateways(ctx context.Context, o Options) error {
	gws := append([]gateways.Gateway(nil), o.Gateways...)
	if a.cfg.Gateways.Console.Enabled() && o.Stdin != nil {
		a.console = console.New(o.Stdin, o.Stdout, o.Interactive)
		gws = append(gws, a.console)
	}
	if t := a.cfg.Gateways.Telegram; t.Enabled() {
		gw, err := a.telegram(ctx, t, o)
		if err != nil {
			return err
		}
		gws = append(gws, gw)
	}
	if a.cfg.Gateways.Discord.Enabled() {
		a.log.Warn().Msg("gateways.discord is configured, but this version has no Discord adapter yet: ignored")
	}
	if a.cfg.Gateways.Slack.Enabled() {
		a.log.Warn().Msg("gateways.slack is configured, but this version has no Slack adapter yet: ignored")
	}
	if len(gws) == 0 {
		return errors.New("gateways: none is enabled, so nobody could talk to the bot (enable gateways.console or set a platform token)")
	}
	for _, gw := range gws {
		if err := a.engine.Register(gw.Name(), gw); err != nil {
			return err
		}
	}
	a.gateways = gws
	return nil
}

// telegram builds the Telegram gateway; it checks the token with getMe. In
// webhook mode without its own listen address, the webhook is served on
// http.listen.
func (a *App) telegram(ctx context.Context, t config.Telegram, o Options) (*telegram.Gateway, error) {
	tc := telegram.Config{
		Token:      t.Token.Value(),
		APIURL:     t.APIURL,
		Mode:       t.Mode,
		Group:      t.Group,
		HTTPClient: o.HTTPClient,
		Webhook: telegram.Webhook{
			Listen:      t.Webhook.Listen,
			PublicURL:   t.Webhook.PublicURL,
			SecretToken: t.Webhook.SecretToken.Value(),
		},
	}
	if o.TuneTelegram != nil {
		o.TuneTelegram(&tc)
	}
	gw, err := telegram.New(ctx, tc, telegram.Deps{
		Log:       a.log,
		Cursors:   a.store,
		Approvals: a.broker,
	})
	if err != nil {
		return nil, fmt.Errorf("gateways.telegram: %w", err)
	}
	if tc.Mode == telegram.ModeWebhook && tc.Webhook.Listen == "" {
		if a.cfg.HTTP.Listen == "" {
			return nil, fmt.Errorf("gateways.telegram.webhook.listen: empty, and http.listen is empty too: nothing would serve the webhook")
		}
		a.routes = append(a.routes, route{pattern: "POST " + gw.WebhookPath(), handler: gw.WebhookHandler()})
	}
	return gw, nil
}

// route is an extra handler on the http.listen server (a gateway's webhook).
type route struct {
	pattern string
	handler http.Handler
}
