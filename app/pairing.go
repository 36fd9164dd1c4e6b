package app

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/pairing"
	"github.com/gatehouse-bot/gatehouse/store"
)

// pairingRefresh is how often an instance on a store several instances
// share reads the paired identities again, to see the others' /pair and
// /unpair (a stranger's message not admitted asks for a read sooner).
const pairingRefresh = 5 * time.Second

// buildPairing returns the pairing codes and paired identities over the
// store; it reads them again every pairingRefresh only when the store is
// shared (store.Sharer): otherwise this process is their only writer.
func buildPairing(ctx context.Context, st store.Store, audit pairing.Audit, now func() time.Time, log zerolog.Logger) (*pairing.Manager, error) {
	var refresh time.Duration
	if sh, ok := st.(store.Sharer); ok && sh.Shared() {
		refresh = pairingRefresh
	}
	return pairing.New(ctx, pairing.Options{Store: st, Audit: audit, Now: now, Refresh: refresh,
		Log: log.With().Str("component", "pairing").Logger()})
}

// PairingGateways names the gateways whose section turns pairing on
// (gateways.<name>.pairing), in the gateway table's order.
func PairingGateways(cfg *config.Config) []string {
	var out []string
	for _, name := range cfg.Gateways.Names() {
		if p, ok := cfg.Gateways.Section(name).(gateways.Pairer); ok && p.Pairs() {
			out = append(out, name)
		}
	}
	return out
}
