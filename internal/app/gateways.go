package app

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
)

// buildGateways constructs every enabled gateway and registers each as the
// actuator for its conversations.
func (a *App) buildGateways(ctx context.Context, o Options) error {
	gws := append([]gateways.Gateway(nil), o.Gateways...)
	if a.cfg.Gateways.Console.Enabled() && o.Stdin != nil {
		a.console = console.New(o.Stdin, o.Stdout, o.Interactive)
		gws = append(gws, a.console)
	}
	platform, err := a.platformGateways(ctx, o)
	if err != nil {
		return err
	}
	gws = append(gws, platform...)
	for _, gw := range gws {
		if err := a.engine.Register(gw.Name(), gw); err != nil {
			return err
		}
	}
	a.gateways = gws
	return nil
}

// platformGateways constructs the enabled chat platform gateways.
func (a *App) platformGateways(ctx context.Context, o Options) ([]gateways.Gateway, error) {
	return nil, nil
}
