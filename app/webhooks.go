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

// buildWebhooks builds the webhooks server (before the engine: it is one
// of /status's reporters; its deliveries go to the engine and its threads
// open on the gateways, both looked up when a delivery comes). It is
// mounted on http.listen by mountWebhooks.
func (a *App) buildWebhooks(cfg *config.Config) (*webhooks.Server, error) {
	hooks, err := WebhookHooks(cfg)
	if err != nil {
		return nil, err
	}
	return webhooks.New(hooks, webhooks.Options{Inbox: engineInbox{a}, Store: a.store, Audit: a.store,
		Gateways: webhookGateways{a}, Metrics: a.metrics, Instance: a.instance,
		Log: a.log.With().Str("component", "webhooks").Logger()}), nil
}

// mountWebhooks serves the webhooks at POST /hooks/<name> on http.listen
// (always, when it is on, so that a reload may add one), once every
// webhook's conversation is on a running gateway.
func (a *App) mountWebhooks(cfg *config.Config) error {
	if err := a.checkWebhookGateways(cfg); err != nil {
		return err
	}
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

// engineInbox submits a delivery's signal to the engine (built after the
// webhooks server).
type engineInbox struct{ a *App }

func (e engineInbox) Submit(ctx context.Context, s core.Signal) error {
	return e.a.engine.Submit(ctx, s)
}

// webhookGateways finds the running gateways' abilities for the webhooks.
type webhookGateways struct{ a *App }

func (g webhookGateways) ThreadStarter(gateway string) core.ThreadStarter {
	ts, _ := g.a.gateway(gateway).(core.ThreadStarter)
	return ts
}

func (g webhookGateways) Send(ctx context.Context, conv core.Conversation, text string) error {
	gw := g.a.gateway(conv.Gateway)
	if gw == nil {
		return fmt.Errorf("gateway %s is not running", conv.Gateway)
	}
	_, err := gw.Act(ctx, core.Action{Kind: core.ActionReply, Conv: conv, Text: text, Escaped: true})
	return err
}
