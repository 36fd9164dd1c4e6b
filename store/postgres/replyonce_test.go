package postgres_test

import (
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

func TestReplyOnceContract(t *testing.T) {
	pgtest.Server(t) // one skip line for the suite, not one a subtest
	storetest.ReplyOnceContract(t, func(t *testing.T, now func() time.Time) (a, b storetest.ReplyOnceStore) {
		dsn := pgtest.DSN(t)
		return openAt(t, dsn, postgres.Options{Now: now}), openAt(t, dsn, postgres.Options{Now: now})
	})
}
