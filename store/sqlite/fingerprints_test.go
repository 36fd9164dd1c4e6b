package sqlite_test

import (
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/sqlite"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

func TestFingerprintContract(t *testing.T) {
	storetest.FingerprintContract(t, func(t *testing.T, now func() time.Time) storetest.FingerprintStore {
		return openTemp(t, sqlite.Options{Now: now})
	})
}
