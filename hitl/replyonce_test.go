package hitl_test

import (
	"context"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// TestHoldAgainAfterATakeover: a turn taken over from a stopped instance
// (Held.Again) that proposes a call its earlier run held already raises no
// second request (the first stands); another call, another person's, or
// a turn that was not taken over, still does.
func TestHoldAgainAfterATakeover(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	h.hold(t, lsCall)
	requests := func() int { return len(h.alpha.in(convA)) }
	pending := func() int {
		t.Helper()
		list, err := h.b.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	before := requests()
	again := core.Held{Conv: convA, From: asker, Call: lsCall, Rule: "shell → approve", Again: true}
	text, err := h.b.Hold(ctx, again)
	if err != nil || text == "" {
		t.Fatalf("Hold again = %q, %v", text, err)
	}
	if requests() != before || pending() != 1 {
		t.Fatalf("held again after a takeover: %d requests (want %d), %d pending (want 1)", requests(), before, pending())
	}
	other := again
	other.Call = llm.ToolCall{ID: "call_2", Name: "shell", Args: `{"command":"rm -rf /srv"}`}
	if _, err := h.b.Hold(ctx, other); err != nil {
		t.Fatal(err)
	}
	byAdmin := again
	byAdmin.From = admin
	if _, err := h.b.Hold(ctx, byAdmin); err != nil {
		t.Fatal(err)
	}
	fresh := again
	fresh.Again = false
	if _, err := h.b.Hold(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if pending() != 4 {
		t.Fatalf("%d pending; want 4 (another call, another person, a turn not taken over)", pending())
	}
}
