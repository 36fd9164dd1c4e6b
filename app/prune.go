package app

import (
	"context"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/startup"
)

// pruneEvery is how often history older than store.retention is deleted.
// The first prune is at start, once the bot receives (runInside).
const pruneEvery = 24 * time.Hour

// pruneAfter prunes once recv opens, the bot receiving (the store leaves
// its first prune to the bot: storetable.Open), and then daily while the
// store keeps history for store.retention or is shared: a shared store
// prunes daily whatever the retention, its outbox gaining a row a reply
// (store.OutboxKeep).
func (a *App) pruneAfter(ctx context.Context, recv *startup.Receiving) error {
	if !recv.Wait(ctx) {
		return nil
	}
	a.prune(ctx, true)
	if a.cfg.Store.Retention > 0 || a.journal != nil {
		return a.pruneLoop(ctx, pruneEvery)
	}
	return nil
}

// pruneLoop deletes history past the retention every interval until ctx
// ends. A failed prune is logged and tried again next time: it never stops
// the bot.
func (a *App) pruneLoop(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			a.prune(ctx, false)
		}
	}
}

// prune runs one prune and logs how many messages it removed (the first,
// at start, only when it removed some).
func (a *App) prune(ctx context.Context, first bool) {
	n, err := a.store.Prune(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Error().Err(err).Msg("pruning history failed")
		}
		return
	}
	if first && n == 0 {
		return
	}
	a.log.Info().Int64("removed", n).Str("retention", a.cfg.Store.Retention.String()).
		Msg("history pruned")
}

// receiverReports is a gateway that says when it first receives
// (startup.Ready), when ReportsReceiving is true: a long-polling gateway.
type receiverReports interface{ ReportsReceiving() bool }

// anyReceiverReports reports whether a gateway will open the start-up's
// Receiving; when none will, Run opens it itself once every gateway has
// started.
func (a *App) anyReceiverReports() bool {
	for _, gw := range a.gateways {
		if r, ok := gw.(receiverReports); ok && r.ReportsReceiving() {
			return true
		}
	}
	return false
}

// collectCheckpointsAfter runs, once recv opens, the checkpoints'
// collection that buildCheckpoints left out of the start-up
// (checkpoint.Options.CollectLater): blobs a crash left that no checkpoint
// names are deleted and the blob store counted. A failure is logged, and
// the first checkpoint collects again: it never stops the bot.
func (a *App) collectCheckpointsAfter(ctx context.Context, recv *startup.Receiving) error {
	if !recv.Wait(ctx) {
		return nil
	}
	if err := a.checkpoints.Collect(ctx); err != nil && ctx.Err() == nil {
		a.log.Error().Err(err).Msg("checkpoint: collecting blobs failed")
	}
	return nil
}
