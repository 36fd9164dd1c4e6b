package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
)

// ErrInstanceInUse is returned by ClaimName (and so by app's Run) when
// another live process, on the shared store, runs under this instance's
// name (store.instance): the bot stops before it does anything, and
// exits 1.
var ErrInstanceInUse = errors.New("instance name in use")

// newProcessID is the random id this process writes with its heartbeats
// (store.Instance.Process): two processes under one name differ by it.
func newProcessID() string { return rand.Text() }

// ClaimName makes the instance's name this process's on a shared store,
// before anything runs (restart recovery, receivers, leases: all keyed by
// the name). The name is free when it has no heartbeat, or one last seen
// store.lease_ttl or longer ago. A fresher heartbeat is either a live
// process's or one a crash left behind (a restart at once): ClaimName
// watches it, polling every poll, and refuses (ErrInstanceInUse) as soon
// as it is renewed, which a live process does every heartbeat interval
// (at most a third of lease_ttl); one that is not renewed ages out within
// lease_ttl, and the name is taken then. So a crashed instance restarts
// within lease_ttl, and a second live process under one name exits.
func (c *Member) ClaimName(ctx context.Context, ttl, poll time.Duration) error {
	var first store.Instance
	waiting := false
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		held, ok, err := c.st.ClaimInstance(ctx, c.self, ttl)
		switch {
		case err != nil:
			return fmt.Errorf("claim the instance name %q: %w", c.self.Name, err)
		case ok:
			if waiting {
				c.log.Info().Msg("the earlier heartbeat under this instance's name aged out; starting")
			}
			return nil
		case held.Name == "": // removed meanwhile (a clean stop): claim it again
		case !waiting:
			first, waiting = held, true
			c.log.Warn().Time("last_seen", held.LastSeen).Dur("lease_ttl", ttl).
				Msg("another process's heartbeat under this instance's name is recent; waiting up to store.lease_ttl to see whether it is alive (a crash leaves such a heartbeat behind)")
		case held.Process != first.Process || !held.LastSeen.Equal(first.LastSeen):
			return fmt.Errorf("%w: another live process runs as instance %q on this store (its heartbeat was renewed at %s); "+
				"two processes under one name would take each other's approved calls for a dead instance's and release each other's leases. "+
				"Give each process its own name: store.instance in the configuration (or the variable it reads, such as GATEHOUSE_INSTANCE); "+
				"left empty it is hostname-pid, unique per process",
				ErrInstanceInUse, shown(c.self.Name), held.LastSeen.UTC().Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
