package main

import (
	"context"
	"time"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
)

// doctorCluster reports, on a store several instances share (store.Sharer),
// what they must agree on and what the store says of them: that
// tools.workspace must be storage every instance mounts at the same path
// (a turn, and an /undo, may run on any of them; the checkpoint blobs are
// in the database), the instances alive, who holds each lease, and the
// keys in which their configurations differ from each other's (a
// warning: allowed, but an approval is judged by the policy of the
// instance that runs it) and from this file. db is open read-only;
// redact is the bot's. Nothing on a store that is not shared (SQLite).
func doctorCluster(ctx context.Context, r *report, cfg *config.Config, db store.Store, redact func(string) string) {
	sh, ok := db.(store.Sharer)
	if !ok || !sh.Shared() {
		return
	}
	r.line("cluster", "tools.workspace %s must be storage every instance mounts, at this same path: any instance may run a turn or an /undo on it (checkpoint blobs are in the database)",
		cfg.Tools.Workspace)
	instances, leases, err := cluster.View(ctx, db, time.Now())
	if err != nil {
		r.problem("cluster", "%v", err)
		return
	}
	r.line("cluster", "instances alive: %s", instances)
	r.line("cluster", "leases held: %s", leases)
	if prints, ok := db.(store.ConfigFingerprints); ok {
		doctorConfigs(ctx, r, cfg, prints, redact)
	}
}

// doctorConfigs reports the keys in which the configurations of the
// instances alive differ from each other's and from this file's.
func doctorConfigs(ctx context.Context, r *report, cfg *config.Config, prints store.ConfigFingerprints, redact func(string) string) {
	differ, fromFile, alive, err := app.ConfigDiffs(ctx, prints, cfg, redact)
	if err != nil {
		r.problem("cluster", "%v", err)
		return
	}
	for _, d := range differ {
		r.warning("cluster", "configurations of instances %s (allowed; an approved call runs under the policy of the instance that runs it)", d)
	}
	for _, d := range fromFile {
		r.line("cluster", "configuration of instance %s (until it reloads, or restarts, with this file)", d)
	}
	if alive > 0 && len(differ) == 0 && len(fromFile) == 0 {
		r.line("cluster", "configuration: the instances alive (%d) run this file's", alive)
	}
}
