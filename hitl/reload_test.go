package hitl_test

import (
	"sync"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestSetApprovers: the new approvers may answer a request held before
// the change, the old ones no longer; a bad list changes nothing.
func TestSetApprovers(t *testing.T) {
	h := newHarness(t, nil)
	tok := h.hold(t, lsCall)
	if err := h.b.SetApprovers(nil); err == nil {
		t.Error("SetApprovers(nil) accepted")
	}
	if err := h.b.SetApprovers([]core.Identity{"nocolon"}); err == nil {
		t.Error("SetApprovers(nocolon) accepted")
	}
	if !h.b.IsApprover(boss) {
		t.Fatal("a refused list changed the approvers")
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 200 {
			h.b.IsApprover(eve)
		}
	})
	if err := h.b.SetApprovers([]core.Identity{eve}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if h.b.IsApprover(boss) || !h.b.IsApprover(eve) {
		t.Fatalf("approvers now %v", h.b.Approvers())
	}
	h.say(boss, convB, "/approve "+tok)
	mustContain(t, "old approver's reply", h.lastReply(t, convB).Text, "Not authorised")
	h.say(eve, convB, "/approve "+tok)
	h.idle(t)
	if n := h.d.runs.Load(); n != 1 {
		t.Errorf("tool ran %d times, want once (approved by the new approver)", n)
	}
}
