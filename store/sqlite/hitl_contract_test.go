package sqlite_test

import (
	"testing"

	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/hitl/hitltest"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// The hitl package's own contracts, against SQLite.

func TestHitlStoreContract(t *testing.T) {
	hitltest.StoreContract(t, func(t *testing.T) hitl.Store { return openTemp(t, sqlite.Options{}) })
}

func TestHitlStandingContract(t *testing.T) {
	hitltest.StandingContract(t, func(t *testing.T) hitl.StandingStore { return openTemp(t, sqlite.Options{}) })
}

func TestHitlAuditContract(t *testing.T) {
	hitltest.AuditContract(t, func(t *testing.T) hitl.Audit { return openTemp(t, sqlite.Options{}) })
}

// TestMemoryAuditContract runs this package's audit suite against hitl's
// in-memory log, so both implementations agree.
func TestMemoryAuditContract(t *testing.T) {
	storetest.AuditContract(t, func(t *testing.T) store.Audit { return hitl.NewMemoryStore() })
}

// TestGrantContract runs the grant suite against SQLite (one store: a
// process's own) and against hitl's in-memory grants, so both agree.
func TestGrantContract(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.GrantContract(t, func(t *testing.T) (a, b storetest.GrantStore) {
			db := openTemp(t, sqlite.Options{})
			return db, db
		})
	})
	t.Run("memory", func(t *testing.T) {
		storetest.GrantContract(t, func(t *testing.T) (a, b storetest.GrantStore) {
			m := hitl.NewMemoryStanding()
			return m, m
		})
	})
}
