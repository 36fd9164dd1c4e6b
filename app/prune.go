package app

import (
	"context"
	"time"
)

// pruneEvery is how often history older than store.retention is deleted.
// The store also prunes once when it opens.
const pruneEvery = 24 * time.Hour

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
			a.prune(ctx)
		}
	}
}

// prune runs one prune and logs how many messages it removed.
func (a *App) prune(ctx context.Context) {
	n, err := a.store.Prune(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Error().Err(err).Msg("pruning history failed")
		}
		return
	}
	a.log.Info().Int64("removed", n).Str("retention", a.cfg.Store.Retention.String()).
		Msg("history pruned")
}
