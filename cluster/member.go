package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store"
)

// Instances sharing a store: each heartbeats every HeartbeatEvery and counts
// as alive while seen within aliveWindow.
const (
	HeartbeatEvery = 10 * time.Second
	aliveWindow    = 3 * HeartbeatEvery
	// statusInstances and statusLeases bound /status's lists.
	statusInstances = 16
	statusLeases    = 16
	// removeWait bounds the clean stop's removal of the instance's row.
	removeWait = 5 * time.Second
)

// heartbeatRenewal names the heartbeat among the renewals the fence
// watches (Fence).
const heartbeatRenewal = "heartbeat"

// MemberStore is what a member of the cluster, and the view of the
// instances sharing a store (View), read and write of that store.
type MemberStore interface {
	store.Instances
	store.Leases
}

// Member registers this instance in the store by a heartbeat and adds the
// instances alive and the leases held to /status (a core.StatusReporter:
// core knows no store).
type Member struct {
	st   MemberStore
	self store.Instance
	log  zerolog.Logger
	// prints and fp compare this instance's configuration with those of
	// the others alive, at start and after each reload (compareConfig),
	// and for /status; nil prints (a store that is not shared) compares
	// nothing.
	prints store.ConfigFingerprints
	fp     fingerprintState
	// driver and schema name the store and the schema version this
	// build runs, for /status (set by app from storetable).
	driver string
	schema int
	// fence is told when each heartbeat that succeeded began; nil
	// unless the store is shared.
	fence *Fence
}

var _ core.StatusReporter = (*Member)(nil)

// NewMember returns the member of the cluster that is this instance, name
// and version, started now.
func NewMember(st MemberStore, name, version string, now time.Time, log zerolog.Logger) *Member {
	return &Member{st: st, self: store.Instance{Name: name, Version: version, Process: newProcessID(), Started: now.UTC()},
		log: log.With().Str("instance", name).Logger()}
}

// Started is when this instance started.
func (c *Member) Started() time.Time { return c.self.Started }

// Process is the random id this process writes with its heartbeats
// (store.Instance.Process).
func (c *Member) Process() string { return c.self.Process }

// UseStore names, for /status, the store's driver and the schema version
// this build runs.
func (c *Member) UseStore(driver string, schema int) { c.driver, c.schema = driver, schema }

// UseFence has each heartbeat that succeeds renew fence.
func (c *Member) UseFence(fence *Fence) { c.fence = fence }

// storeLine is /status's line on the store: its driver and the schema
// version this instance runs, and, on a database server (store.Server),
// the server's version, asked each time (a failover may change it).
func (c *Member) storeLine(ctx context.Context) string {
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

// Run heartbeats at once and then every interval until ctx ends, when it
// removes the instance (a clean stop: /status elsewhere no longer lists
// it). A failed heartbeat is logged and tried again next time.
func (c *Member) Run(ctx context.Context, every time.Duration) error {
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
func (c *Member) StatusLines(ctx context.Context, _ core.Conversation) []string {
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
