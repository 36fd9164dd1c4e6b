package app

import (
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
)

// sharedStore is a store that says whether several instances share it.
type sharedStore struct {
	store.Store
	shared bool
}

func (s sharedStore) Shared() bool { return s.shared }

// TestReceiverLeaseOnlyOnASharedStore: receivers run under a lease held by
// this instance's name for store.lease_ttl only when the store is shared;
// a store that is not (SQLite, which does not say) gives none.
func TestReceiverLeaseOnlyOnASharedStore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		st    store.Store
		lease bool
	}{
		{"not a Sharer", &pruneStore{}, false},
		{"not shared", sharedStore{shared: false}, false},
		{"shared", sharedStore{shared: true}, true},
	} {
		cfg := &config.Config{Store: config.Store{LeaseTTL: config.Duration(7 * time.Second)}}
		a := &App{store: tc.st, instance: "host-a-9", cfg: cfg}
		l := a.receiverLease()
		if (l != nil) != tc.lease {
			t.Fatalf("%s: lease %+v, want one: %v", tc.name, l, tc.lease)
		}
		if l != nil && (l.Holder != "host-a-9" || l.TTL != 7*time.Second || l.Leaser == nil) {
			t.Fatalf("%s: lease %+v", tc.name, l)
		}
	}
}
