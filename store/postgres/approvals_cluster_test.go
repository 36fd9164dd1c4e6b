package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/hitl/hitltest"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
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
