package app

import (
	"context"
	"time"

	"github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/store"
)

// ErrInstanceInUse is returned by Run when another live process, on the
// shared store, runs under this instance's name (store.instance): the
// bot stops before it does anything, and exits 1 (cluster.ErrInstanceInUse).
var ErrInstanceInUse = cluster.ErrInstanceInUse

// heartbeatInterval is how often this instance heartbeats: every
// cluster.HeartbeatEvery, or, when the store is shared, a sixth of
// store.lease_ttl when that is shorter, so that a live instance is never
// taken for a dead one (its approved runs interrupted) by the others,
// which wait lease_ttl, and that two heartbeats may fail before its fence
// (lease_ttl/2) stops its calls.
func (a *App) heartbeatInterval() time.Duration {
	ttl := a.cfg.Store.LeaseTTL.D()
	if a.receiverLease() == nil || ttl <= 0 {
		return cluster.HeartbeatEvery
	}
	return min(cluster.HeartbeatEvery, max(ttl/6, 100*time.Millisecond))
}

// claimName makes the instance's name this process's on a shared store
// (cluster.Member.ClaimName), polling a tenth of store.lease_ttl; with a
// store that is not shared it does nothing.
func (a *App) claimName(ctx context.Context) error {
	if !a.sharedStore() {
		return nil
	}
	ttl := a.cfg.Store.LeaseTTL.D()
	return a.member.ClaimName(ctx, ttl, max(ttl/10, 50*time.Millisecond))
}

// receiverLease is the lease receivers that the platform allows once per
// token run under: nil unless the store is shared by several instances
// (store.Sharer); with SQLite the lock file already makes this process
// the only one.
func (a *App) receiverLease() *gateways.LeaseConfig {
	sh, ok := a.store.(store.Sharer)
	if !ok || !sh.Shared() {
		return nil
	}
	// store.lease_ttl: how long a dead instance's receiver lease waits
	// before another instance takes it over.
	return &gateways.LeaseConfig{Leaser: a.store, Holder: a.instance, TTL: a.cfg.Store.LeaseTTL.D()}
}

// gatewayInbox is what the gateways (and the scheduler) submit to: the
// engine, behind the store's probe when the store is shared (a database
// server, which can be lost while the bot runs: see guardedInbox). With
// SQLite it is the engine itself, as fast as ever.
func (a *App) gatewayInbox() gateways.Inbox {
	if a.sharedStore() {
		return guardedInbox{inbox: a.engine, probe: a.probe}
	}
	return a.engine
}

// sharedStore reports whether the store says several instances may share
// it (store.Sharer).
func (a *App) sharedStore() bool {
	sh, ok := a.store.(store.Sharer)
	return ok && sh.Shared()
}
