package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// TestFinishNextInbox: the entry a finished turn takes in its done row is
// its holder's as a claim is, and no one else's: another instance cannot
// claim it while the lease lives; its holder records stages, is asked to
// stop by /cancel from elsewhere, renews it (which claims it in its own
// row) and finishes it; given back, it is claimable at once; a holder
// that dies leaves it to be taken over once the lease expires. A turn
// that is not its holder's takes nothing. With its process's heartbeat
// (TestFinishNextInboxKeptByTheHeartbeat) it needs no renewal.
func TestFinishNextInbox(t *testing.T) {
	ctx, clock, a, b, put, _ := handOver(t)
	gws := []string{"gw"}
	x1, y1, x2 := put("x1", "gw:x"), put("y1", "gw:y"), put("x2", "gw:x")
	if e, ok, err := a.ClaimInbox(ctx, "a", gws, time.Minute); err != nil || !ok || e.ID != x1 {
		t.Fatal(e, ok, err)
	}
	if _, _, err := b.FinishNextInbox(ctx, x1, "b", "", gws, time.Minute); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("b finishing a's turn: %v; want ErrNotHeld", err)
	}
	// The oldest head nobody holds is y1 (x2 waits behind x1 until now).
	e, ok, err := a.FinishNextInbox(ctx, x1, "a", "", gws, time.Minute)
	if err != nil || !ok || e.ID != y1 || e.Conv != "gw:y" || e.Stage != 0 {
		t.Fatalf("a's finish: %+v %v %v; want entry %d taken", e, ok, err, y1)
	}
	if e, ok, err := b.ClaimInbox(ctx, "b", gws, time.Minute); err != nil || !ok || e.ID != x2 {
		t.Fatalf("b's claim: %+v %v %v; want %d (y1 is a's)", e, ok, err, x2)
	}
	if e, ok, err := b.ClaimInbox(ctx, "b", gws, time.Minute); err != nil || ok {
		t.Fatalf("b claimed %+v (%v) while a holds y1", e, err)
	}
	if err := a.SetInboxStage(ctx, y1, "a", int(core.StageTool)); err != nil {
		t.Fatalf("a's stage of the entry it took: %v", err)
	}
	if err := b.SetInboxStage(ctx, y1, "b", int(core.StageTool)); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("b's stage of a's entry: %v; want ErrNotHeld", err)
	}
	if ok, err := b.CancelInbox(ctx, "gw:y"); err != nil || !ok {
		t.Fatalf("/cancel of y from b: %v %v; want the turn a runs marked", ok, err)
	}
	if ids, err := a.CancelledInbox(ctx, "a"); err != nil || len(ids) != 1 || ids[0] != y1 {
		t.Fatalf("a's turns asked to stop: %v %v; want [%d]", ids, err, y1)
	}
	// Given back, it is anyone's at once.
	if err := a.ReleaseInbox(ctx, y1, "a"); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := b.ClaimInbox(ctx, "b", gws, time.Minute); err != nil || !ok || e.ID != y1 || e.Stage != int(core.StageTool) {
		t.Fatalf("b's claim of the entry a gave back: %+v %v %v", e, ok, err)
	}

	// Renewed, then finished, by its holder; a holder gone leaves it to
	// expire.
	y2, x3 := put("y2", "gw:y"), put("x3", "gw:x")
	if e, ok, err := b.FinishNextInbox(ctx, x2, "b", "", gws, time.Minute); err != nil || !ok || e.ID != x3 {
		t.Fatalf("b's finish of x2: %+v %v %v; want x3 taken (its conversation's next)", e, ok, err)
	}
	clock.Set(clock.Now().Add(50 * time.Second))
	if err := b.RenewInbox(ctx, "b", []int64{y1, x3}, time.Minute); err != nil {
		t.Fatal(err)
	}
	clock.Set(clock.Now().Add(50 * time.Second)) // past the done row's lease of x3, within the renewal's
	if e, ok, err := a.ClaimInbox(ctx, "a", gws, time.Minute); err != nil || ok {
		t.Fatalf("a claimed %+v (%v) while b holds y1 and x3 (renewed)", e, err)
	}
	if err := b.FinishInbox(ctx, x3, "b"); err != nil {
		t.Fatalf("b finishing the entry it renewed: %v", err)
	}
	if e, ok, err := b.FinishNextInbox(ctx, y1, "b", "", gws, time.Minute); err != nil || !ok || e.ID != y2 {
		t.Fatalf("b's finish of y1: %+v %v %v; want y2 taken", e, ok, err)
	}
	clock.Set(clock.Now().Add(2 * time.Minute)) // b died: its lease of y2 expires
	if e, ok, err := a.ClaimInbox(ctx, "a", gws, time.Minute); err != nil || !ok || e.ID != y2 {
		t.Fatalf("a's takeover of y2: %+v %v %v", e, ok, err)
	}
	if err := b.FinishInbox(ctx, y2, "b"); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("b finishing y2 after a took it over: %v; want ErrNotHeld", err)
	}
}

// TestFinishNextInboxKeptByTheHeartbeat: an entry taken by a process that
// writes heartbeats is kept while its heartbeat is younger than lease_ttl,
// past the done row's own lease, and its renewal writes nothing; another
// process under the same name (a restart) does not keep it; once the
// heartbeat is older than lease_ttl (a death), another instance takes it
// over.
func TestFinishNextInboxKeptByTheHeartbeat(t *testing.T) {
	ctx, clock, a, b, putIn, dsn := handOver(t)
	put := func(key string) int64 { return putIn(key, "gw:x") }
	gws := []string{"gw"}
	beat := func(process string) {
		t.Helper()
		if err := a.Heartbeat(ctx, store.Instance{Name: "a", Process: process, Started: clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	x1, x2 := put("x1"), put("x2")
	beat("pa")
	if e, ok, err := a.ClaimInbox(ctx, "a", gws, time.Minute); err != nil || !ok || e.ID != x1 {
		t.Fatal(e, ok, err)
	}
	if e, ok, err := a.FinishNextInbox(ctx, x1, "a", "pa", gws, time.Minute); err != nil || !ok || e.ID != x2 {
		t.Fatalf("a's finish: %+v %v %v; want x2 taken", e, ok, err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	row := func() int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, `SELECT xmin::text::bigint FROM inbox WHERE id = $1`, x2).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := row()
	for range 4 { // 2 minutes: past the done row's lease, the heartbeat renewed
		clock.Set(clock.Now().Add(30 * time.Second))
		beat("pa")
		if err := a.RenewInbox(ctx, "a", []int64{x2}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if after := row(); after != before {
		t.Fatalf("x2's row was written by its renewals (xmin %d → %d); want the heartbeat to keep it", before, after)
	}
	if e, ok, err := b.ClaimInbox(ctx, "b", gws, time.Minute); err != nil || ok {
		t.Fatalf("b claimed %+v (%v) while a's heartbeat keeps x2", e, err)
	}
	if err := a.SetInboxStage(ctx, x2, "a", int(core.StageTool)); err != nil {
		t.Fatalf("a's stage of x2: %v", err)
	}
	beat("pa2") // a restarted: the new process does not keep what the old one took
	if e, ok, err := b.ClaimInbox(ctx, "b", gws, time.Minute); err != nil || !ok || e.ID != x2 {
		t.Fatalf("b's claim after a's restart: %+v %v %v; want x2", e, ok, err)
	}
	if err := a.FinishInbox(ctx, x2, "a"); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("a finishing x2 after b took it: %v; want ErrNotHeld", err)
	}

	// A death: the heartbeat ages past lease_ttl.
	x3, x4 := put("x3"), put("x4")
	if e, ok, err := b.FinishNextInbox(ctx, x2, "b", "", gws, time.Minute); err != nil || !ok || e.ID != x3 {
		t.Fatalf("b's finish of x2: %+v %v %v; want x3", e, ok, err)
	}
	if err := b.FinishInbox(ctx, x3, "b"); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := b.ClaimInbox(ctx, "b", gws, time.Minute); err != nil || !ok || e.ID != x4 {
		t.Fatal(e, ok, err)
	}
	x5 := put("x5")
	beat("pa2")
	if e, ok, err := a.ClaimInbox(ctx, "a", gws, time.Minute); err != nil || ok {
		t.Fatalf("a claimed %+v (%v) while b holds x4", e, err)
	}
	if err := b.ReleaseInbox(ctx, x4, "b"); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := a.ClaimInbox(ctx, "a", gws, time.Minute); err != nil || !ok || e.ID != x4 {
		t.Fatal(e, ok, err)
	}
	if e, ok, err := a.FinishNextInbox(ctx, x4, "a", "pa2", gws, time.Minute); err != nil || !ok || e.ID != x5 {
		t.Fatalf("a's finish of x4: %+v %v %v; want x5", e, ok, err)
	}
	clock.Set(clock.Now().Add(59 * time.Second))
	if e, ok, err := b.ClaimInbox(ctx, "b", gws, time.Minute); err != nil || ok {
		t.Fatalf("b claimed %+v (%v) within a's lease", e, err)
	}
	clock.Set(clock.Now().Add(2 * time.Second)) // no heartbeat for lease_ttl: a is dead
	if e, ok, err := b.ClaimInbox(ctx, "b", gws, time.Minute); err != nil || !ok || e.ID != x5 {
		t.Fatalf("b's takeover of x5: %+v %v %v", e, ok, err)
	}
}

// TestPruneKeepsAHandOver: the prune of done inbox rows (store.InboxKeep)
// keeps a done row that holds the entry its holder took, while that entry
// runs: a turn may last longer than InboxKeep, and with the row gone
// another instance would claim the entry and run it a second time. Once
// the entry is done, the row goes.
func TestPruneKeepsAHandOver(t *testing.T) {
	ctx, clock, a, b, putIn, _ := handOver(t)
	put := func(key string) int64 { return putIn(key, "gw:x") }
	gws := []string{"gw"}
	beat := func() {
		t.Helper()
		if err := a.Heartbeat(ctx, store.Instance{Name: "a", Process: "pa", Started: clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	x1, x2 := put("x1"), put("x2")
	beat()
	if e, ok, err := a.ClaimInbox(ctx, "a", gws, time.Minute); err != nil || !ok || e.ID != x1 {
		t.Fatal(e, ok, err)
	}
	if e, ok, err := a.FinishNextInbox(ctx, x1, "a", "pa", gws, time.Minute); err != nil || !ok || e.ID != x2 {
		t.Fatalf("a's finish: %+v %v %v; want x2 taken", e, ok, err)
	}
	clock.Set(clock.Now().Add(store.InboxKeep + time.Hour)) // x2's turn still runs on a
	beat()
	if _, err := a.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := b.ClaimInbox(ctx, "b", gws, time.Minute); err != nil || ok {
		t.Fatalf("b claimed %+v (%v) after the prune, while a runs x2", e, err)
	}
	if err := a.FinishInbox(ctx, x2, "a"); err != nil {
		t.Fatalf("a finishing x2 after the prune: %v", err)
	}
	clock.Set(clock.Now().Add(store.InboxKeep + time.Hour))
	if _, err := a.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	if _, added, err := a.PutInbox(ctx, store.InboxEntry{Gateway: "gw", Key: "x1", Conv: "gw:x", Data: []byte("x"), Receiver: "a"}, 0); err != nil || !added {
		t.Fatalf("x1 put again once pruned: added %v, %v; want its row gone", added, err)
	}
}

// handOver is two instances' stores, a and b, on one fresh database (dsn)
// with a clock of their own, and put, which puts a message of
// conversation conv (gateway "gw") received by a.
func handOver(t *testing.T) (ctx context.Context, clock *storetest.Clock, a, b *postgres.DB, put func(key, conv string) int64, dsn string) {
	t.Helper()
	ctx = context.Background()
	clock = storetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	dsn = pgtest.DSN(t)
	a, b = openAt(t, dsn, postgres.Options{Now: clock.Now}), openAt(t, dsn, postgres.Options{Now: clock.Now})
	put = func(key, conv string) int64 {
		t.Helper()
		id, added, err := a.PutInbox(ctx, store.InboxEntry{Gateway: "gw", Key: key, Conv: conv, Data: []byte("x"), Receiver: "a"}, 0)
		if err != nil || !added {
			t.Fatal(added, err)
		}
		return id
	}
	return ctx, clock, a, b, put, dsn
}
