package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/storetest"
)

// TestInboxStagesFromTheHistory: the stages a turn's history rows show
// (its user's message, its final answer) are recorded without writing
// the inbox row, and an instance taking the turn over reads them: the
// message is not added again, the answer is handed over as recorded. A
// stage the history does not show is written. The claim is checked all
// the same. A reset copies the stage the deleted rows showed into the
// inbox row first.
func TestInboxStagesFromTheHistory(t *testing.T) {
	ctx := context.Background()
	clock := storetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	dsn := pgtest.DSN(t)
	a, b := openAt(t, dsn, postgres.Options{Now: clock.Now}), openAt(t, dsn, postgres.Options{Now: clock.Now})
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	stored := func(id int64) (stage int, reply string) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT stage, reply FROM inbox WHERE id = $1`, id).Scan(&stage, &reply); err != nil {
			t.Fatal(err)
		}
		return stage, reply
	}
	takeOver := func(want core.TurnStage) store.InboxEntry {
		t.Helper()
		clock.Set(clock.Now().Add(2 * time.Minute)) // a's claim expires
		e, ok, err := b.ClaimInbox(ctx, "b", []string{"gw"}, time.Minute)
		if err != nil || !ok || e.Stage != int(want) {
			t.Fatalf("b's takeover: %+v %v %v; want stage %d", e, ok, err, want)
		}
		return e
	}

	id, added, err := a.PutInbox(ctx, store.InboxEntry{Gateway: "gw", Key: "m1", Conv: "gw:c", Data: []byte("x"), Receiver: "a"}, 0)
	if err != nil || !added {
		t.Fatal(added, err)
	}
	if e, ok, err := a.ClaimInbox(ctx, "a", []string{"gw"}, time.Minute); err != nil || !ok || e.ID != id {
		t.Fatal(e, ok, err)
	}
	turn := core.WithJournalEntry(ctx, id)
	if err := a.Append(turn, "gw:c", llm.Message{Role: llm.RoleUser, Content: "question"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetInboxStage(ctx, id, "a", int(core.StageInHistory)); err != nil {
		t.Fatal(err)
	}
	if st, _ := stored(id); st != 0 {
		t.Fatalf("the stage the history shows was written to the inbox row (%d)", st)
	}
	// A tool call's stage is not in the history: written.
	if err := a.SetInboxStage(ctx, id, "a", int(core.StageTool)); err != nil {
		t.Fatal(err)
	}
	if st, _ := stored(id); st != int(core.StageTool) {
		t.Fatalf("stored stage %d; want the tool call's, %d", st, core.StageTool)
	}
	if err := a.Append(turn, "gw:c", llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1", Name: "t", Args: "{}"}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "1", Content: "ok"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetInboxStage(ctx, id, "a", int(core.StageInHistory)); err != nil {
		t.Fatal(err)
	}
	if st, _ := stored(id); st != int(core.StageInHistory) {
		t.Fatalf("stored stage %d after the call's results; want %d", st, core.StageInHistory)
	}
	if err := a.Append(turn, "gw:c", llm.Message{Role: llm.RoleAssistant, Content: "the answer"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetInboxReply(ctx, id, "a", int(core.StageReplied), "the answer"); err != nil {
		t.Fatal(err)
	}
	if st, reply := stored(id); st != int(core.StageInHistory) || reply != "" {
		t.Fatalf("the reply the history shows was written to the inbox row: %d %q", st, reply)
	}
	// Another text than the history's is written.
	if err := a.SetInboxReply(ctx, id, "a", int(core.StageReplied), "another"); err != nil {
		t.Fatal(err)
	}
	if st, reply := stored(id); st != int(core.StageReplied) || reply != "another" {
		t.Fatalf("stored %d %q; want the reply recorded", st, reply)
	}
	if _, err := conn.Exec(ctx, `UPDATE inbox SET stage = 1, reply = '' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}

	e := takeOver(core.StageReplied)
	if text, err := b.InboxReply(ctx, e.ID); err != nil || text != "the answer" {
		t.Fatalf("InboxReply = %q, %v; want the answer in the history", text, err)
	}
	// a lost its claim: recording fails although the history shows it.
	if err := a.SetInboxReply(ctx, id, "a", int(core.StageReplied), "the answer"); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("a's record after losing the claim: %v; want ErrNotHeld", err)
	}
	if err := a.SetInboxStage(ctx, id, "a", int(core.StageInHistory)); !errors.Is(err, store.ErrNotHeld) {
		t.Fatalf("a's stage after losing the claim: %v; want ErrNotHeld", err)
	}
	// A reset keeps the stage and the reply the history showed.
	if err := b.Reset(ctx, "gw:c"); err != nil {
		t.Fatal(err)
	}
	if st, reply := stored(id); st != int(core.StageReplied) || reply != "the answer" {
		t.Fatalf("after the reset the inbox row holds %d %q; want the stage and reply the history showed", st, reply)
	}
	e = takeOver(core.StageReplied)
	if text, err := b.InboxReply(ctx, e.ID); err != nil || text != "the answer" {
		t.Fatalf("InboxReply after the reset = %q, %v", text, err)
	}
}

// TestPutClaimInbox: a message whose conversation has nothing pending is
// put claimed by its receiver; one behind a pending entry is put pending;
// a redelivery is not put again.
func TestPutClaimInbox(t *testing.T) {
	ctx := context.Background()
	a, b := pair(t, time.Now)
	put := func(key string) (int64, bool, bool) {
		t.Helper()
		id, added, claimed, err := a.PutClaimInbox(ctx, store.InboxEntry{Gateway: "gw", Key: key, Conv: "gw:c", Data: []byte("x"), Receiver: "a"}, 0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return id, added, claimed
	}
	first, added, claimed := put("m1")
	if !added || !claimed {
		t.Fatalf("the conversation's first message: added %v, claimed %v; want both", added, claimed)
	}
	if _, added, claimed := put("m1"); added || claimed {
		t.Fatalf("a redelivery: added %v, claimed %v; want neither", added, claimed)
	}
	next, added, claimed := put("m2")
	if !added || claimed {
		t.Fatalf("a message behind a pending one: added %v, claimed %v; want added, not claimed", added, claimed)
	}
	if e, ok, err := b.ClaimInbox(ctx, "b", []string{"gw"}, time.Minute); err != nil || ok {
		t.Fatalf("b claimed %+v while a holds the conversation's head (%v)", e, err)
	}
	if err := a.FinishInbox(ctx, first, "a"); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := b.ClaimInbox(ctx, "b", []string{"gw"}, time.Minute); err != nil || !ok || e.ID != next {
		t.Fatalf("b's claim after the head was done: %+v %v %v; want entry %d", e, ok, err, next)
	}
}
