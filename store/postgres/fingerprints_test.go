package postgres_test

import (
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

func TestFingerprintContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.FingerprintContract(t, func(t *testing.T, now func() time.Time) storetest.FingerprintStore {
		return openFresh(t, postgres.Options{Now: now})
	})
}
