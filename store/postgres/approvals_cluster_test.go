package postgres_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/hitl/hitltest"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
)

// TestHitlClusterContract runs the brokers of several instances, each on
// its own store, on one PostgreSQL database.
func TestHitlClusterContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	hitltest.ClusterContract(t, func(t *testing.T) hitltest.Cluster {
		dsn := pgtest.DSN(t)
		return hitltest.Cluster{
			Open: func(t *testing.T) hitl.SharedStore { return openAt(t, dsn, postgres.Options{}) },
			Heartbeat: func(t *testing.T, s hitl.SharedStore, name string) {
				t.Helper()
				in := store.Instance{Name: name, Started: time.Now()}
				if err := s.(store.Instances).Heartbeat(context.Background(), in); err != nil {
					t.Fatalf("Heartbeat(%s): %v", name, err)
				}
			},
		}
	})
}

// TestListenResolvedReconnects: the listener hears a resolution, and when
// its connection is cut (a server restart or failover does the same) it
// says so, listens again and hears the next one.
func TestListenResolvedReconnects(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := openAt(t, dsn, postgres.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var heard []string
	listening, dropped := 0, 0
	done := make(chan error, 1)
	go func() {
		done <- db.ListenResolved(ctx, func() {
			mu.Lock()
			listening++
			mu.Unlock()
		}, func(from, token string) {
			mu.Lock()
			heard = append(heard, from+"/"+token)
			mu.Unlock()
		}, func(error) {
			mu.Lock()
			dropped++
			mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ListenResolved after its context ended = %v, want nil", err)
		}
	})
	state := func() (int, int, []string) {
		mu.Lock()
		defer mu.Unlock()
		return listening, dropped, slices.Clone(heard)
	}
	testutil.WaitFor(t, "the listener to listen", func() bool { l, _, _ := state(); return l == 1 })
	if err := db.NotifyResolved(ctx, "b", "K7Q2MX9P"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the first resolution", func() bool { _, _, h := state(); return slices.Contains(h, "b/K7Q2MX9P") })

	other := openAt(t, dsn, postgres.Options{})
	testutil.WaitFor(t, "the listening connection to be cut", func() bool {
		n, err := other.TerminateListeners(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	testutil.WaitFor(t, "the listener to listen again", func() bool { l, d, _ := state(); return l >= 2 && d >= 1 })
	if err := db.NotifyResolved(ctx, "c", "ABCDEFGH"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the resolution after the reconnection", func() bool { _, _, h := state(); return slices.Contains(h, "c/ABCDEFGH") })
}
