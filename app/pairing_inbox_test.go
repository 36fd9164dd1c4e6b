package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// TestPairingAndTheInbox: on a shared PostgreSQL store (the durable
// inbox on), a stranger's messages are never written to the inbox table,
// before the pairing or after an /unpair; once paired, the newcomer's
// messages are, and are answered.
func TestPairingAndTheInbox(t *testing.T) {
	dsn := pgtest.DSN(t)
	ai := fakeoai.Start(t)
	ai.Respond(func(fakeoai.Request) fakeoai.Step { return fakeoai.Text("an answer") })
	clock := storetest.NewClock(time.Now())
	b := startPairBot(t, ai, fmt.Sprintf("{driver: postgres, dsn: %q}", dsn), clock)
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	rows := func() int {
		t.Helper()
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM inbox WHERE conv = 'telegram:4242'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	c := code(t, b.say("4242", "4242", "a stranger's words"))
	if n := rows(); n != 0 {
		t.Fatalf("the stranger's message left %d inbox rows; want none", n)
	}
	if got := b.say("ops", "ops", "/pair "+c); !strings.Contains(got, "Paired telegram:4242") {
		t.Fatalf("/pair answered %q", got)
	}
	if got := b.say("4242", "4242", "hello, I am in"); got != "an answer" {
		t.Fatalf("the newcomer's message was answered %q", got)
	}
	if n := rows(); n != 1 {
		t.Fatalf("the newcomer's message left %d inbox rows; want 1", n)
	}
	if got := b.say("ops", "ops", "/unpair telegram:4242"); !strings.Contains(got, "Unpaired") {
		t.Fatalf("/unpair answered %q", got)
	}
	clock.Set(clock.Now().Add(11 * time.Minute)) // the stranger may be answered again
	if got := b.say("4242", "4242", "still in?"); !codeRe.MatchString(got) {
		t.Fatalf("the unpaired identity got %q; want a new code", got)
	}
	testutil.WaitFor(t, "the bot idle", func() bool { return len(ai.Requests()) == 1 })
	if n := rows(); n != 1 {
		t.Fatalf("after /unpair the inbox holds %d rows of the identity; want still 1", n)
	}
}
