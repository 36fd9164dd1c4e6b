package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
)

// TestSendSlotsOwnWindow: a run of requests that one instance reserved
// alone under a token takes the limit's own window (SendLimit.Own: 30 in
// 1.025 s), so one instance alone on a token is not held to the shared
// window (30 in 1.1 s, 27.3 a second); a run holding another instance's
// request, or a time written without its owner (by a gatehouse before
// schema 24), keeps the shared window.
func TestSendSlotsOwnWindow(t *testing.T) {
	pgtest.Server(t)
	ctx := context.Background()
	at := time.Unix(1_800_000_000, 0)
	dsn := pgtest.DSN(t)
	db := openAt(t, dsn, postgres.Options{Now: func() time.Time { return at }})
	reserve := func(token, owner string, chat int) time.Duration {
		t.Helper()
		w, err := db.ReserveSend(ctx,
			store.SendLimit{Key: token, N: 30, Per: 1100 * time.Millisecond, Own: 1025 * time.Millisecond, Owner: owner},
			store.SendLimit{Key: fmt.Sprintf("%s:chat:%d", token, chat), N: 1, Per: 1100 * time.Millisecond, Owner: owner})
		if err != nil {
			t.Fatalf("ReserveSend(%s, %s, chat %d): %v", token, owner, chat, err)
		}
		return w
	}
	burst := func(token string) {
		t.Helper()
		for i := range 30 {
			if w := reserve(token, "a", i); w != 0 {
				t.Fatalf("%s: reservation %d of a: wait %v; want 0", token, i+1, w)
			}
		}
	}

	burst("tg:1")
	if w := reserve("tg:1", "a", 30); w != 1025*time.Millisecond {
		t.Errorf("a's 31st reservation, after 30 of its own: wait %v; want the own window, 1.025s", w)
	}
	if w := reserve("tg:1", "b", 31); w != 1100*time.Millisecond {
		t.Errorf("b's reservation, after 31 of a's: wait %v; want the shared window, 1.1s", w)
	}

	// Another instance in the run: the shared window.
	for i := range 29 {
		reserve("tg:2", "a", i)
	}
	reserve("tg:2", "b", 29)
	if w := reserve("tg:2", "a", 30); w != 1100*time.Millisecond {
		t.Errorf("a's reservation after 29 of its own and one of b's: wait %v; want the shared window, 1.1s", w)
	}

	// Times written without their owners count as another instance's.
	burst("tg:3")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE send_slots SET owned = ''::bytea WHERE key LIKE 'tg:3:%'`); err != nil {
		t.Fatal(err)
	}
	if w := reserve("tg:3", "a", 30); w != 1100*time.Millisecond {
		t.Errorf("a's 31st reservation after 30 of unknown owners: wait %v; want the shared window, 1.1s", w)
	}
}
