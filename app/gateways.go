package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// buildGateways constructs every gateway of the gateway table that runs as
// configured, logs each section's start-up warnings, and registers each
// gateway as the actuator for its conversations.
func (a *App) buildGateways(ctx context.Context, o Options) error {
	sections, err := gatewaytable.Sections(a.cfg.Gateways)
	if err != nil {
		return err
	}
	deps := gateways.Deps{
		Log:           a.log,
		Cursors:       a.store,
		Parking:       a.store,
		Memory:        a.store,
		Auth:          a.auth,
		Approvals:     a.broker,
		HTTPClient:    o.HTTPClient,
		Stdin:         o.Stdin,
		Stdout:        o.Stdout,
		Interactive:   o.Interactive,
		HTTPListen:    a.cfg.HTTP.Listen,
		Tune:          o.Tune,
		Metrics:       a.metrics,
		Lease:         a.receiverLease(),
		Shared:        a.sharedDelivery(),
		MaxAttachment: int64(a.cfg.Attachments.MaxBytes),
	}
	if a.cfg.HTTP.Listen != "" {
		deps.Mount = func(pattern string, h http.Handler) {
			a.routes = append(a.routes, route{pattern: pattern, handler: h})
		}
	}
	gws := append([]gateways.Gateway(nil), o.Gateways...)
	prepared := a.prepared
	a.prepared = nil // built once
	for _, s := range sections {
		for _, w := range s.Section.Warnings() {
			a.log.Warn().Str("gateway", s.Name).Msg(w)
		}
		if p, ok := prepared[s.Name]; ok {
			s.Section = p
		}
		gw, err := s.Section.Build(ctx, deps)
		if err != nil {
			return err
		}
		if gw == nil {
			continue
		}
		if _, ok := gw.(gateways.InputEnder); ok && a.ender == nil {
			a.ender = gw
		}
		gws = append(gws, gw)
	}
	if len(gws) == 0 {
		keys := make([]string, len(sections))
		for i, s := range sections {
			keys[i] = "gateways." + s.Name
		}
		return fmt.Errorf("gateways: none is enabled, so nobody could talk to the bot (enable one of %s)", strings.Join(keys, ", "))
	}
	for _, gw := range gws {
		if err := a.engine.Register(gw.Name(), gw); err != nil {
			return err
		}
	}
	a.gateways = gws
	return nil
}

// prepareGateways starts, under ctx, the requests the gateways' Build
// waits for (gateways.Preparer: a first call to the platform, such as
// the bot's own identity), so that they overlap the store's open and the
// rest of the build.
func (a *App) prepareGateways(ctx context.Context, o Options) {
	sections, err := gatewaytable.Sections(a.cfg.Gateways)
	if err != nil {
		return // buildGateways says why
	}
	deps := gateways.Deps{Log: a.log, HTTPClient: o.HTTPClient, Tune: o.Tune, MaxAttachment: int64(a.cfg.Attachments.MaxBytes)}
	for _, s := range sections {
		if p, ok := s.Section.(gateways.Preparer); ok {
			if a.prepared == nil {
				a.prepared = map[string]gateways.Section{}
			}
			a.prepared[s.Name] = p.Prepare(ctx, deps)
		}
	}
}

// route is an extra handler on the http.listen server (a gateway's webhook).
type route struct {
	pattern string
	handler http.Handler
}
