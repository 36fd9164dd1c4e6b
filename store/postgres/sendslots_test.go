package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// TestSendSlotMarginBetweenInstancesOnly: a limit's Margin holds between
// the requests of different reservers, not between one reserver's own:
// one instance alone sends at the platform's rate (30 a second on
// Telegram, not 30 per 1.1 s), and two instances keep the margin between
// them. On a frozen clock the waits are exactly the slots.
func TestSendSlotMarginBetweenInstancesOnly(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	a, b := pair(t, clock.Now)
	ctx := context.Background()
	limit := func(reserver string) store.SendLimit {
		return store.SendLimit{Key: "example:1", N: 2, Per: 1100 * time.Millisecond, Margin: 100 * time.Millisecond, Reserver: reserver}
	}
	reserve := func(db interface {
		ReserveSend(context.Context, ...store.SendLimit) (time.Duration, error)
	}, reserver string) time.Duration {
		t.Helper()
		w, err := db.ReserveSend(ctx, limit(reserver))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for i, want := range []time.Duration{0, 0, time.Second, time.Second} {
		if w := reserve(a, "a"); w != want {
			t.Fatalf("instance a's reservation %d of 2 per 1.1s (margin 0.1s) waits %v; want %v (its own requests need no margin)", i+1, w, want)
		}
	}
	// b's first request follows a's two at 1s: 1.1s after them.
	if w := reserve(b, "b"); w != 2100*time.Millisecond {
		t.Fatalf("instance b's reservation after a's waits %v; want 2.1s (the margin between instances)", w)
	}
	// Unnamed reservers keep the margin everywhere.
	clock.Set(clock.Now().Add(time.Hour))
	for i, want := range []time.Duration{0, 0, 1100 * time.Millisecond} {
		if w := reserve(a, ""); w != want {
			t.Fatalf("unnamed reservation %d waits %v; want %v", i+1, w, want)
		}
	}
}
