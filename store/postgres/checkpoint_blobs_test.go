package postgres_test

import (
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

func TestCheckpointBlobContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.CheckpointBlobContract(t, func(t *testing.T, now func() time.Time) store.CheckpointBlobStore {
		return openFresh(t, postgres.Options{Now: now})
	})
}
