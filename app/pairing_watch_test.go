package app

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/pairing"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestUnpairOnAnotherInstanceAppliesAtOnce: two instances on one
// PostgreSQL database; a pairing and then an unpairing committed by one
// reach the other's paired set through the store's word of them
// (watchPairings), not at its next periodic read: here it has none.
// (/unpair used to take up to pairingRefresh, 5 s, to shut the identity
// out of the other instances.)
func TestUnpairOnAnotherInstanceAppliesAtOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	open := func() *postgres.DB {
		db, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dbA, dbB := open(), open()
	m, err := pairing.New(ctx, pairing.Options{Store: dbB, Audit: dbB, Log: zerolog.Nop()}) // no Refresh
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- watchPairings(ctx, dbB, m, zerolog.New(zerolog.NewTestWriter(t))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watchPairings: %v", err)
		}
	})

	const id = core.Identity("telegram:4242")
	now := time.Now()
	c := record.PairingCode{Identity: id, Conv: "telegram:4242", Code: "ABCDEFGH", Hash: "h1",
		Created: now, Expires: now.Add(pairing.CodeTTL)}
	if _, err := dbA.OfferPairingCode(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := dbA.Pair(ctx, id, "h1", "telegram:ops"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the pairing on A in B's paired set", func() bool { return m.Paired(id) })
	if _, err := dbA.Unpair(ctx, id); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the unpairing on A in B's paired set", func() bool { return !m.Paired(id) })
}
