package cluster

import (
	"context"
	"strings"

	"github.com/gatehouse-bot/gatehouse/store"
)

// PrefixLeases are the store's leases as checkpoint asks for them
// (checkpoint.Leases): the holders of the leases of a name's prefix.
type PrefixLeases struct{ store.Leases }

// LeaseHoldersOf lists the holders of the unexpired leases whose name
// starts with prefix.
func (l PrefixLeases) LeaseHoldersOf(ctx context.Context, prefix string) ([]string, error) {
	all, err := l.LeaseHolders(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range all {
		if strings.HasPrefix(h.Name, prefix) {
			out = append(out, h.Holder)
		}
	}
	return out, nil
}
