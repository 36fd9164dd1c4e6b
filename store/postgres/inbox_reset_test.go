package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store"
)

// TestResetInboxMarksTheTurnItFound: /reset on another instance forgets
// the history and marks the entry whose turn is claimed at that moment,
// by entry: the conversation's next entry, claimed after the reset, is
// not marked; the instance's own claim is left to it.
func TestResetInboxMarksTheTurnItFound(t *testing.T) {
	ctx := context.Background()
	a, b := pair(t, time.Now)
	put := func(key string) int64 {
		id, added, err := a.PutInbox(ctx, store.InboxEntry{Gateway: "gw", Key: key, Conv: "gw:c", Data: []byte("x"), Receiver: "a"}, 0)
		if err != nil || !added {
			t.Fatalf("put %s: %v %v", key, added, err)
		}
		return id
	}
	first, next := put("m1"), put("m2")
	e, ok, err := a.ClaimInbox(ctx, "a", []string{"gw"}, time.Minute)
	if err != nil || !ok || e.ID != first {
		t.Fatalf("claim: %+v %v %v", e, ok, err)
	}
	if err := a.Append(ctx, "gw:c", llm.Message{Role: llm.RoleUser, Content: "before"}); err != nil {
		t.Fatal(err)
	}
	if marked, err := a.ResetInbox(ctx, "gw:c", "a"); err != nil || marked {
		t.Fatalf("the holder's own reset marked its entry: %v %v", marked, err)
	}
	if marked, err := b.ResetInbox(ctx, "gw:c", "b"); err != nil || !marked {
		t.Fatalf("reset on b: marked %v, %v; want the running entry marked", marked, err)
	}
	if h, err := a.Load(ctx, "gw:c"); err != nil || len(h) != 0 {
		t.Fatalf("history after the reset: %v %v", h, err)
	}
	got, err := a.InboxResets(ctx, []int64{first, next})
	if err != nil || !slices.Equal(got, []int64{first}) {
		t.Fatalf("InboxResets = %v, %v; want [%d]", got, err, first)
	}
	if _, err := b.CancelInbox(ctx, "gw:c"); err != nil { // a /cancel after it keeps the reset
		t.Fatal(err)
	}
	if got, _ := a.InboxResets(ctx, []int64{first}); len(got) != 1 {
		t.Fatalf("a /cancel after /reset undid its mark: %v", got)
	}
	if err := a.FinishInbox(ctx, first, "a"); err != nil {
		t.Fatal(err)
	}
	e, ok, err = a.ClaimInbox(ctx, "a", []string{"gw"}, time.Minute)
	if err != nil || !ok || e.ID != next {
		t.Fatalf("claim the next: %+v %v %v", e, ok, err)
	}
	if got, err := a.InboxResets(ctx, []int64{first, next}); err != nil || len(got) != 0 {
		t.Fatalf("after the marked turn ended, InboxResets = %v, %v; the next turn must not be marked", got, err)
	}
}
