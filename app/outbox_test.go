package app

import (
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/store"
)

// replyStore is a shared store that has send slots and an outbox.
type replyStore struct {
	sharedStore
	store.SendSlots
	store.Outbox
}

// TestSharedDeliveryOnlyOnASharedStore: the gateways share pacing and the
// outbox only on a store that is shared and has both; otherwise (SQLite)
// they get nothing and nothing is written per reply. (On a shared store
// the instance heartbeats three times per lease_ttl, heartbeatInterval, so
// that it is not taken for gone.)
func TestSharedDeliveryOnlyOnASharedStore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		st     store.Store
		shared bool
	}{
		{"not a Sharer", &pruneStore{}, false},
		{"not shared", replyStore{sharedStore: sharedStore{shared: false}}, false},
		{"shared without an outbox", sharedStore{shared: true}, false},
		{"shared", replyStore{sharedStore: sharedStore{shared: true}}, true},
	} {
		cfg := &config.Config{Store: config.Store{LeaseTTL: config.Duration(6 * time.Second)}}
		a := &App{store: tc.st, instance: "host-a-9", cfg: cfg}
		s := a.sharedDelivery()
		if (s != nil) != tc.shared || (a.journal != nil) != tc.shared {
			t.Fatalf("%s: shared %+v, journal %v; want them: %v", tc.name, s, a.journal, tc.shared)
		}
		if s == nil {
			continue
		}
		s.Journal.Serve("example:1")
		s.Journal.Serve("example:1")
		if got := a.journal.Served(); len(got) != 1 || got[0] != "example:1" {
			t.Errorf("%s: serves %q; want example:1 once", tc.name, got)
		}
	}
}
