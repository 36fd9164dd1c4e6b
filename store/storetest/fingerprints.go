package storetest

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// FingerprintStore is what FingerprintContract needs: the instances'
// heartbeats and their configuration fingerprints.
type FingerprintStore interface {
	store.Instances
	store.ConfigFingerprints
}

// FingerprintContract tests a store.ConfigFingerprints on the store's
// clock: a fingerprint is recorded beside a registered instance's
// heartbeat (an unregistered one is record.ErrNotFound), replaced by the
// next, kept across heartbeats, listed for the instances seen within the
// window only, left out when none was recorded or it is past
// store.MaxFingerprint, and forgotten with the instance. newStore must
// make the store read its time from now.
func FingerprintContract(t *testing.T, newStore func(t *testing.T, now func() time.Time) FingerprintStore) {
	t.Helper()
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newStore(t, clock.Now)
	const window = 30 * time.Second
	beat := func(name string) {
		t.Helper()
		if err := s.Heartbeat(ctx, store.Instance{Name: name, Version: "v1", Started: clusterEpoch}); err != nil {
			t.Fatalf("Heartbeat(%s): %v", name, err)
		}
	}
	set := func(name string, fp map[string]string) {
		t.Helper()
		if err := s.SetConfigFingerprint(ctx, name, fp); err != nil {
			t.Fatalf("SetConfigFingerprint(%s): %v", name, err)
		}
	}
	list := func(want map[string]map[string]string) {
		t.Helper()
		got, err := s.ConfigFingerprints(ctx, window)
		if err != nil {
			t.Fatalf("ConfigFingerprints: %v", err)
		}
		if !maps.EqualFunc(got, want, func(a, b map[string]string) bool { return maps.Equal(a, b) }) {
			t.Fatalf("at %v: ConfigFingerprints = %v; want %v", clock.Now().Sub(clusterEpoch), got, want)
		}
	}
	if err := s.SetConfigFingerprint(ctx, "never-seen", map[string]string{"policy.rules": "1"}); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("SetConfigFingerprint of an unregistered instance: %v; want record.ErrNotFound", err)
	}
	list(map[string]map[string]string{})
	a1 := map[string]string{"policy.rules": "aa11", "llm.providers": "bb22"}
	a2 := map[string]string{"policy.rules": "cc33", "llm.providers": "bb22"}
	b := map[string]string{"policy.rules": "aa11", "llm.providers": "dd44"}
	beat("host-a")
	beat("host-b")
	beat("host-c") // records none: left out
	set("host-a", a1)
	set("host-b", b)
	list(map[string]map[string]string{"host-a": a1, "host-b": b})
	set("host-a", a2) // replaced
	clock.Set(clusterEpoch.Add(20 * time.Second))
	beat("host-a") // a heartbeat keeps it
	clock.Set(clusterEpoch.Add(40 * time.Second))
	list(map[string]map[string]string{"host-a": a2}) // host-b not seen within the window

	huge := map[string]string{"k": strings.Repeat("x", store.MaxFingerprint)}
	beat("host-b")
	set("host-b", huge)
	list(map[string]map[string]string{"host-a": a2})

	if err := s.RemoveInstance(ctx, "host-a"); err != nil {
		t.Fatalf("RemoveInstance: %v", err)
	}
	list(map[string]map[string]string{})
}
