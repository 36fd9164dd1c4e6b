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
// /unpair should the store's word of them (watchPairings) be lost (a
// stranger's message not admitted asks for a read sooner).
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

// Waits of watchPairings after its watch failed: the first, doubled up to
// the last.
const (
	pairingWatchFirst = time.Second
	pairingWatchMax   = 30 * time.Second
)

// watchPairings reads the paired set again each time the store says an
// instance paired or unpaired someone (store.PairingWatcher), so that an
// /unpair on another instance shuts the identity out here at once, until
// ctx ends. While the watch is down (it is tried again, waiting longer
// each time) the periodic read every pairingRefresh stands.
func watchPairings(ctx context.Context, w store.PairingWatcher, m *pairing.Manager, log zerolog.Logger) error {
	wait := pairingWatchFirst
	for {
		err := w.WatchPairings(ctx, func() {
			wait = pairingWatchFirst
			if err := m.Reload(ctx); err != nil && ctx.Err() == nil {
				log.Warn().Err(err).Msg("pairing: paired identities not read again; the last read stays")
			}
		})
		if ctx.Err() != nil {
			return nil
		}
		log.Warn().Err(err).Dur("retry_in", wait).Msg("pairing: lost the store's word of other instances' pairings; the paired set is read every " + pairingRefresh.String() + " meanwhile")
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, pairingWatchMax)
	}
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
