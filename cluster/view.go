package cluster

import (
	"context"
	"fmt"
	"time"
)

// View is what `bot doctor` shows of the instances sharing a store
// (read-only: it is no instance itself): the instances alive, as /status
// counts them (a heartbeat within its window), each with its version and
// how long ago it was last seen, and the leases held, each with its holder
// and expiry. Names come from the store (other instances' configurations):
// one line each, bounded, their lists capped as /status caps them.
func View(ctx context.Context, st MemberStore, now time.Time) (instances, leases string, err error) {
	ins, err := st.Instances(ctx, aliveWindow)
	if err != nil {
		return "", "", fmt.Errorf("instances: %w", err)
	}
	items := make([]string, len(ins))
	for i, in := range ins {
		item := shown(in.Name) + " ("
		if in.Version != "" {
			item += shown(in.Version) + ", "
		}
		items[i] = item + "seen " + now.Sub(in.LastSeen).Round(time.Second).String() + " ago)"
	}
	instances = "none"
	if len(items) > 0 {
		instances = capped(items, statusInstances)
	}
	held, err := st.LeaseHolders(ctx)
	if err != nil {
		return "", "", fmt.Errorf("leases: %w", err)
	}
	items = make([]string, len(held))
	for i, l := range held {
		items[i] = shown(l.Name) + " held by " + shown(l.Holder) + " (until " + l.Expires.UTC().Format("15:04:05 UTC") + ")"
	}
	leases = "none"
	if len(items) > 0 {
		leases = capped(items, statusLeases)
	}
	return instances, leases, nil
}
