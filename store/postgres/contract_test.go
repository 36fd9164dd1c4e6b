package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/hitl/hitltest"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// openAt opens the database dsn names and closes it when the test ends.
func openAt(t testing.TB, dsn string, o postgres.Options) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// openFresh opens a store on a fresh database of the test server.
func openFresh(t testing.TB, o postgres.Options) *postgres.DB {
	t.Helper()
	return openAt(t, pgtest.DSN(t), o)
}

func TestHistoryContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.HistoryContract(t, func(t *testing.T, max int) core.History {
		return openFresh(t, postgres.Options{History: max})
	})
}

func TestAuditContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.AuditContract(t, func(t *testing.T) store.Audit { return openFresh(t, postgres.Options{}) })
}

func TestCursorContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.CursorContract(t, func(t *testing.T) store.Cursors { return openFresh(t, postgres.Options{}) })
}

func TestParkingContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.ParkingContract(t, func(t *testing.T, now func() time.Time) storetest.ParkingStore {
		return openFresh(t, postgres.Options{Now: now})
	})
}

func TestUsageContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.UsageContract(t, func(t *testing.T, now func() time.Time) store.UsageStore {
		return openFresh(t, postgres.Options{Now: now})
	})
}

func TestCheckpointContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.CheckpointContract(t, func(t *testing.T) store.Checkpoints { return openFresh(t, postgres.Options{}) })
}

// The hitl package's own contracts, against PostgreSQL.

func TestHitlStoreContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	hitltest.StoreContract(t, func(t *testing.T) hitl.Store { return openFresh(t, postgres.Options{}) })
}

func TestHitlStandingContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	hitltest.StandingContract(t, func(t *testing.T) hitl.StandingStore { return openFresh(t, postgres.Options{}) })
}

func TestHitlAuditContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	hitltest.AuditContract(t, func(t *testing.T) hitl.Audit { return openFresh(t, postgres.Options{}) })
}

func TestMemoryContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	var dsn string
	var opts postgres.Options
	storetest.MemoryContract(t, func(t *testing.T, now func() time.Time, max int) storetest.MemoryStore {
		dsn, opts = pgtest.DSN(t), postgres.Options{Now: now, MemoryMax: max}
		db, err := postgres.Open(context.Background(), dsn, opts)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}, func(t *testing.T, m storetest.MemoryStore) storetest.MemoryStore {
		if err := m.(*postgres.DB).Close(); err != nil {
			t.Fatal(err)
		}
		return openAt(t, dsn, opts)
	})
}

func TestScheduleSlotContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.ScheduleSlotContract(t, func(t *testing.T, now func() time.Time) storetest.SlotStore {
		return openFresh(t, postgres.Options{Now: now})
	})
}

func TestLeaseContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.LeaseContract(t, func(t *testing.T, now func() time.Time) store.Leases {
		return openFresh(t, postgres.Options{Now: now})
	})
}

func TestInstanceContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.InstanceContract(t, func(t *testing.T, now func() time.Time) storetest.InstanceStore {
		return openFresh(t, postgres.Options{Now: now})
	})
}

func TestInstanceClaimContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.InstanceClaimContract(t, func(t *testing.T, now func() time.Time) storetest.InstanceStore {
		return openFresh(t, postgres.Options{Now: now})
	})
}

func TestPairingContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.PairingContract(t, func(t *testing.T, now func() time.Time) store.Pairings {
		return openFresh(t, postgres.Options{Now: now})
	})
}

func TestInboxContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.InboxContract(t, func(t *testing.T, now func() time.Time) (a, b storetest.InboxStore) {
		dsn := pgtest.DSN(t)
		return openAt(t, dsn, postgres.Options{Now: now}), openAt(t, dsn, postgres.Options{Now: now})
	})
}

// TestGrantContract: grants through two stores on one database, as two
// instances see them.
func TestGrantContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.GrantContract(t, func(t *testing.T) (a, b storetest.GrantStore) {
		dsn := pgtest.DSN(t)
		return openAt(t, dsn, postgres.Options{}), openAt(t, dsn, postgres.Options{})
	})
}

func TestTextContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.TextContract(t, func(t *testing.T, now func() time.Time) store.Store {
		return openFresh(t, postgres.Options{Now: now})
	})
}

func TestWebhookContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.WebhookContract(t, func(t *testing.T, now func() time.Time) (a, b store.Webhooks) {
		dsn := pgtest.DSN(t)
		return openAt(t, dsn, postgres.Options{Now: now}), openAt(t, dsn, postgres.Options{Now: now})
	})
}

func TestWebSessionContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.WebSessionContract(t, func(t *testing.T, now func() time.Time) (a, b store.WebSessions) {
		dsn := pgtest.DSN(t)
		return openAt(t, dsn, postgres.Options{Now: now}), openAt(t, dsn, postgres.Options{Now: now})
	})
}

func TestActivityContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.ActivityContract(t, func(t *testing.T, now func() time.Time) storetest.ActivityStore {
		return openFresh(t, postgres.Options{Now: now})
	})
}

func TestSkillContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.SkillContract(t, func(t *testing.T) (a, b store.Skills) {
		dsn := pgtest.DSN(t)
		return openAt(t, dsn, postgres.Options{}), openAt(t, dsn, postgres.Options{})
	})
}
