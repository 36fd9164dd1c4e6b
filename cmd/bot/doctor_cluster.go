package main

import (
	"context"
	"time"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
)

// doctorCluster reports, on a store several instances share (store.Sharer),
// what they must agree on and what the store says of them: that
// tools.workspace must be storage every instance mounts at the same path
// (a turn, and an /undo, may run on any of them; the checkpoint blobs are
// in the database), the instances alive and who holds each lease. db is
// open read-only. Nothing on a store that is not shared (SQLite).
func doctorCluster(ctx context.Context, r *report, cfg *config.Config, db store.Store) {
	sh, ok := db.(store.Sharer)
	if !ok || !sh.Shared() {
		return
	}
	r.line("cluster", "tools.workspace %s must be storage every instance mounts, at this same path: any instance may run a turn or an /undo on it (checkpoint blobs are in the database)",
		cfg.Tools.Workspace)
	instances, leases, err := app.ClusterView(ctx, db, time.Now())
	if err != nil {
		r.problem("cluster", "%v", err)
		return
	}
	r.line("cluster", "instances alive: %s", instances)
	r.line("cluster", "leases held: %s", leases)
}
