package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/webhooks"
)

// WebhookHooks turns the configured webhooks into the server's hooks, with
// their defaults; errors name the key.
func WebhookHooks(cfg *config.Config) ([]webhooks.Hook, error) {
	out := make([]webhooks.Hook, 0, len(cfg.Webhooks))
	for i, w := range cfg.Webhooks {
		conv, err := core.ParseConversation(strings.TrimSpace(w.Conversation))
		if err != nil {
			return nil, fmt.Errorf("webhooks[%d].conversation: %w", i, err)
		}
		rate, err := webhooks.ParseRate(w.Rate)
		if err != nil {
			return nil, fmt.Errorf("webhooks[%d].rate: %w", i, err)
		}
		maxBytes := int64(w.MaxBytes)
		if maxBytes == 0 {
			maxBytes = webhooks.DefaultMaxBytes
		}
		out = append(out, webhooks.Hook{Name: w.Name, Format: w.Format, Secret: w.Secret.Value(), Conv: conv,
			Prompt: w.Prompt, Events: w.Events, MaxBytes: maxBytes, Rate: rate})
	}
	return out, nil
}

// mountWebhooks builds the webhooks server, once every webhook's
// conversation is on a running gateway, and serves it at POST
// /hooks/<name> on http.listen (always, when it is on, so that a reload
// may add one). Its deliveries go to the engine, its threads open on the
// gateways.
func (a *App) mountWebhooks(cfg *config.Config) error {
	hooks, err := WebhookHooks(cfg)
	if err != nil {
		return err
	}
	if err := a.checkWebhookGateways(cfg); err != nil {
		return err
	}
	a.webhooks = webhooks.New(hooks, webhooks.Options{Inbox: a.engine, Store: a.store, Audit: a.store,
		Gateways: webhookGateways{a}, Metrics: a.metrics, Instance: a.instance,
		Log: a.log.With().Str("component", "webhooks").Logger()})
	if cfg.HTTP.Listen != "" {
		a.routes = append(a.routes, route{pattern: webhooks.Pattern, handler: a.webhooks})
	}
	return nil
}

// checkWebhookGateways refuses a webhook whose conversation is on a
// gateway that does not run: its turns could never be answered.
func (a *App) checkWebhookGateways(cfg *config.Config) error {
	for i, w := range cfg.Webhooks {
		conv, err := core.ParseConversation(strings.TrimSpace(w.Conversation))
		if err != nil {
			return fmt.Errorf("webhooks[%d].conversation: %w", i, err)
		}
		if a.gateway(conv.Gateway) == nil {
			return fmt.Errorf("webhooks[%d].conversation: gateway %s is not enabled, so %s could never get a reply", i, conv.Gateway, w.Name)
		}
	}
	return nil
}

// gateway returns the running gateway name, or nil.
func (a *App) gateway(name string) core.Actuator {
	for _, gw := range a.gateways {
		if gw.Name() == name {
			return gw
		}
	}
	return nil
}

// webhookStatus adds the webhooks' lines to /status (the engine is built
// before the webhooks server, which needs it).
type webhookStatus struct{ a *App }

func (w webhookStatus) StatusLines(ctx context.Context, conv core.Conversation) []string {
	if w.a.webhooks == nil {
		return nil
	}
	return w.a.webhooks.StatusLines(ctx, conv)
}

// webhookGateways finds the running gateways' abilities for the webhooks.
type webhookGateways struct{ a *App }

func (g webhookGateways) ThreadStarter(gateway string) core.ThreadStarter {
	ts, _ := g.a.gateway(gateway).(core.ThreadStarter)
	return ts
}

func (g webhookGateways) Send(ctx context.Context, conv core.Conversation, replyTo, text string) error {
	gw := g.a.gateway(conv.Gateway)
	if gw == nil {
		return fmt.Errorf("gateway %s is not running", conv.Gateway)
	}
	_, err := gw.Act(ctx, core.Action{Kind: core.ActionReply, Conv: conv, Text: text, ReplyTo: replyTo, Escaped: true})
	return err
}
