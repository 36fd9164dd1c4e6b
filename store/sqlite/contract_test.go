package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// openAt opens the database at path and closes it when the test ends.
func openAt(t testing.TB, path string, o sqlite.Options) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, o)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// openTemp opens a fresh database in the test's temp dir.
func openTemp(t testing.TB, o sqlite.Options) *sqlite.DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "gatehouse.db"), o)
}

func TestHistoryContract(t *testing.T) {
	storetest.HistoryContract(t, func(t *testing.T, max int) core.History {
		return openTemp(t, sqlite.Options{History: max})
	})
}

func TestMemoryHistoryContract(t *testing.T) {
	storetest.HistoryContract(t, func(t *testing.T, max int) core.History {
		return core.NewMemoryHistory(max)
	})
}

func TestAuditContract(t *testing.T) {
	storetest.AuditContract(t, func(t *testing.T) store.Audit { return openTemp(t, sqlite.Options{}) })
}

func TestCursorContract(t *testing.T) {
	storetest.CursorContract(t, func(t *testing.T) store.Cursors { return openTemp(t, sqlite.Options{}) })
}

func TestParkingContract(t *testing.T) {
	storetest.ParkingContract(t, func(t *testing.T, now func() time.Time) storetest.ParkingStore {
		return openTemp(t, sqlite.Options{Now: now})
	})
}

func TestUsageContract(t *testing.T) {
	storetest.UsageContract(t, func(t *testing.T, now func() time.Time) store.UsageStore {
		return openTemp(t, sqlite.Options{Now: now})
	})
}

func TestCheckpointContract(t *testing.T) {
	storetest.CheckpointContract(t, func(t *testing.T) store.Checkpoints { return openTemp(t, sqlite.Options{}) })
}

func TestMemoryContract(t *testing.T) {
	var path string
	var opts sqlite.Options
	storetest.MemoryContract(t, func(t *testing.T, now func() time.Time, max int) storetest.MemoryStore {
		path, opts = filepath.Join(t.TempDir(), "gatehouse.db"), sqlite.Options{Now: now, MemoryMax: max}
		db, err := sqlite.Open(context.Background(), path, opts)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}, func(t *testing.T, m storetest.MemoryStore) storetest.MemoryStore {
		if err := m.(*sqlite.DB).Close(); err != nil {
			t.Fatal(err)
		}
		return openAt(t, path, opts)
	})
}

func TestScheduleSlotContract(t *testing.T) {
	storetest.ScheduleSlotContract(t, func(t *testing.T, now func() time.Time) storetest.SlotStore {
		return openTemp(t, sqlite.Options{Now: now})
	})
}

func TestLeaseContract(t *testing.T) {
	storetest.LeaseContract(t, func(t *testing.T, now func() time.Time) store.Leases {
		return openTemp(t, sqlite.Options{Now: now})
	})
}

func TestInstanceContract(t *testing.T) {
	storetest.InstanceContract(t, func(t *testing.T, now func() time.Time) storetest.InstanceStore {
		return openTemp(t, sqlite.Options{Now: now})
	})
}

func TestInstanceClaimContract(t *testing.T) {
	storetest.InstanceClaimContract(t, func(t *testing.T, now func() time.Time) storetest.InstanceStore {
		return openTemp(t, sqlite.Options{Now: now})
	})
}

func TestPairingContract(t *testing.T) {
	storetest.PairingContract(t, func(t *testing.T, now func() time.Time) store.Pairings {
		return openTemp(t, sqlite.Options{Now: now})
	})
}

func TestTextContract(t *testing.T) {
	storetest.TextContract(t, func(t *testing.T, now func() time.Time) store.Store {
		return openTemp(t, sqlite.Options{Now: now})
	})
}

func TestWebhookContract(t *testing.T) {
	storetest.WebhookContract(t, func(t *testing.T, now func() time.Time) (a, b store.Webhooks) {
		db := openTemp(t, sqlite.Options{Now: now}) // one process per file: both handles are one
		return db, db
	})
}

func TestWebSessionContract(t *testing.T) {
	storetest.WebSessionContract(t, func(t *testing.T, now func() time.Time) (a, b store.WebSessions) {
		db := openTemp(t, sqlite.Options{Now: now}) // one process per file: both handles are one
		return db, db
	})
}

func TestActivityContract(t *testing.T) {
	storetest.ActivityContract(t, func(t *testing.T, now func() time.Time) storetest.ActivityStore {
		return openTemp(t, sqlite.Options{Now: now})
	})
}

func TestSkillContract(t *testing.T) {
	storetest.SkillContract(t, func(t *testing.T) (a, b store.Skills) {
		db := openTemp(t, sqlite.Options{}) // one process per file: both handles are one
		return db, db
	})
}
