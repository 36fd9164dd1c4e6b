package postgres_test

import (
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// pair opens two handles (two pools, as two instances have) on one fresh
// database, both reading their time from now.
func pair(t *testing.T, now func() time.Time) (*postgres.DB, *postgres.DB) {
	dsn := pgtest.DSN(t)
	return openAt(t, dsn, postgres.Options{Now: now}), openAt(t, dsn, postgres.Options{Now: now})
}

func TestSendSlotContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.SendSlotContract(t, func(t *testing.T, now func() time.Time) (store.SendSlots, store.SendSlots) {
		return pair(t, now)
	})
}

func TestOutboxContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.OutboxContract(t, func(t *testing.T, now func() time.Time) (storetest.OutboxStore, storetest.OutboxStore) {
		return pair(t, now)
	})
}
