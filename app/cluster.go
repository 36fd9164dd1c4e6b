package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	durable "github.com/gatehouse-bot/gatehouse/cluster"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store"
)

// Instances sharing a store: each heartbeats every heartbeatEvery and counts
// as alive while seen within aliveWindow.
const (
	heartbeatEvery = 10 * time.Second
	aliveWindow    = 3 * heartbeatEvery
	// statusInstances and statusLeases bound /status's lists.
	statusInstances = 16
	statusLeases    = 16
	// removeWait bounds the clean stop's removal of the instance's row.
	removeWait = 5 * time.Second
)

// heartbeatInterval is how often this instance heartbeats: every
// heartbeatEvery, or, when the store is shared, a sixth of
// store.lease_ttl when that is shorter, so that a live instance is never
// taken for a dead one (its approved runs interrupted) by the others,
// which wait lease_ttl, and that two heartbeats may fail before its fence
// (lease_ttl/2) stops its calls.
func (a *App) heartbeatInterval() time.Duration {
	ttl := a.cfg.Store.LeaseTTL.D()
	if a.receiverLease() == nil || ttl <= 0 {
		return heartbeatEvery
	}
	return min(heartbeatEvery, max(ttl/6, 100*time.Millisecond))
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

// clusterStore is what the cluster view needs of the store.
type clusterStore interface {
	store.Instances
	store.Leases
}

// cluster registers this instance in the store by a heartbeat and adds the
// instances alive and the leases held to /status (a core.StatusReporter:
// core knows no store).
type cluster struct {
	st   clusterStore
	self store.Instance
	log  zerolog.Logger
	// prints and fingerprint compare this instance's configuration with
	// those of the others alive, at start and after each reload
	// (compareConfig), and for /status; nil prints (a store that is not
	// shared) compares nothing. redact is the bot's, for a reload's
	// fingerprint.
	prints configPrints
	redact func(string) string
	fp     fingerprintState
	// driver and schema name the store and the schema version this
	// build runs, for /status (set by App.New from storetable).
	driver string
	schema int
	// fence is told when each heartbeat that succeeded began; nil
	// unless the store is shared.
	fence *durable.Fence
}

var _ core.StatusReporter = (*cluster)(nil)

// newCluster returns the cluster view of this instance, name and version,
// started now.
func newCluster(st clusterStore, name, version string, now time.Time, log zerolog.Logger) *cluster {
	return &cluster{st: st, self: store.Instance{Name: name, Version: version, Started: now.UTC()},
		log: log.With().Str("instance", name).Logger()}
}

// storeLine is /status's line on the store: its driver and the schema
// version this instance runs, and, on a database server (store.Server),
// the server's version, asked each time (a failover may change it).
func (c *cluster) storeLine(ctx context.Context) string {
	line := fmt.Sprintf("Store: %s, schema version %d", c.driver, c.schema)
	sv, ok := c.st.(store.Server)
	if !ok {
		return line
	}
	v, err := sv.ServerVersion(ctx)
	if err != nil {
		c.log.Error().Err(err).Msg("server version for /status")
		return line + ", server: could not be read (the bot's log has the details)"
	}
	return line + ", server " + shown(v)
}

// run heartbeats at once and then every interval until ctx ends, when it
// removes the instance (a clean stop: /status elsewhere no longer lists
// it). A failed heartbeat is logged and tried again next time.
func (c *cluster) run(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	for {
		start := time.Now()
		hctx, cancel := context.WithTimeout(ctx, every)
		err := c.st.Heartbeat(hctx, c.self)
		cancel()
		if err == nil {
			c.fence.Renewed(heartbeatRenewal, start)
		}
		if err == nil && !c.fp.recorded() {
			c.compareConfig(ctx)
		}
		switch {
		case ctx.Err() != nil:
		case err != nil && !failing:
			failing = true
			c.log.Warn().Err(err).Msg("instance heartbeat failed; trying again")
		case err == nil && failing:
			failing = false
			c.log.Info().Msg("instance heartbeat works again")
		}
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeWait)
			defer cancel()
			if err := c.st.RemoveInstance(rctx, c.self.Name); err != nil {
				c.log.Warn().Err(err).Msg("instance not removed from the store; it ages out")
			}
			return nil
		case <-t.C:
		}
	}
}

// StatusLines lists the store (driver, schema and server versions), the
// instances alive, this one marked, and the leases held, with who holds
// each.
func (c *cluster) StatusLines(ctx context.Context, _ core.Conversation) []string {
	lines := []string{c.storeLine(ctx)}
	ins, err := c.st.Instances(ctx, aliveWindow)
	if err != nil {
		c.log.Error().Err(err).Msg("instances for /status")
		lines = append(lines, "Instances: could not be read (the bot's log has the details); this one is "+shown(c.self.Name))
	} else {
		var items []string
		self := false
		for _, in := range ins {
			var notes []string
			if in.Name == c.self.Name {
				self = true
				notes = append(notes, "this one")
			}
			if in.Version != "" {
				notes = append(notes, shown(in.Version))
			}
			item := shown(in.Name)
			if len(notes) > 0 {
				item += " (" + strings.Join(notes, ", ") + ")"
			}
			items = append(items, item)
		}
		if !self {
			items = append([]string{shown(c.self.Name) + " (this one, not registered yet)"}, items...)
		}
		lines = append(lines, "Instances: "+capped(items, statusInstances))
		lines = append(lines, c.configLines(ctx)...)
	}
	leases, err := c.st.LeaseHolders(ctx)
	if err != nil {
		c.log.Error().Err(err).Msg("leases for /status")
		return append(lines, "Leases: could not be read (the bot's log has the details)")
	}
	if len(leases) > 0 {
		items := make([]string, len(leases))
		for i, l := range leases {
			items[i] = shown(l.Name) + " held by " + shown(l.Holder)
		}
		lines = append(lines, "Leases: "+capped(items, statusLeases))
	}
	return lines
}

// shown is a name from the store (another instance's configuration) as
// /status shows it: one line, bounded.
func shown(s string) string { return textutil.GraphicLine(textutil.Shorten(s, 64)) }

// capped joins items, at most max of them, saying how many more there are.
func capped(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}
