package hitl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

// TestHoldShowsNoCheckpointNote: a held call's Note (the engine's "no
// checkpoint: …" when /undo could not take it back) is in the approval
// request, so the approver knows before approving.
func TestHoldShowsNoCheckpointNote(t *testing.T) {
	h := newHarness(t, nil)
	note := "no checkpoint: big.iso is 20 MiB, over tools.checkpoints.max_file (16 MiB); /undo cannot take this call back"
	if _, err := h.b.Hold(context.Background(), core.Held{Conv: convA, From: asker, Call: lsCall, Note: note}); err != nil {
		t.Fatal(err)
	}
	if req := h.lastReply(t, convA).Request; !strings.Contains(req, "⚠ "+note) {
		t.Fatalf("request %q lacks the note", req)
	}
	if _, err := h.b.Hold(context.Background(), core.Held{Conv: convA, From: asker, Call: lsCall}); err != nil {
		t.Fatal(err)
	}
	if req := h.lastReply(t, convA).Request; strings.Contains(req, "no checkpoint") {
		t.Fatalf("request without a note says %q", req)
	}
}
