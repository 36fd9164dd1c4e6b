package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// overLimit sets up the case of the review: an allowed write_file with a
// checkpoint, then an approved shell call that ran over max_file, so
// without a checkpoint. a.txt is "v1" before the first call, "v3" now.
func overLimit(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, func(o *Options) { o.MaxFile = 10 })
	f.write("a.txt", "v1")
	if note := f.call(convA, "write_file", ""); note != "" {
		t.Fatalf("note %q", note)
	}
	f.write("a.txt", "v2")
	f.write("big.bin", strings.Repeat("x", 11))
	if note := f.call(convA, "shell", "K7Q2MX9P"); !strings.HasPrefix(note, "no checkpoint: big.bin") {
		t.Fatalf("the approved call's note %q", note)
	}
	f.write("a.txt", "v3")
	return f
}

func auditOutcomes(t *testing.T, db *sqlite.DB) []string {
	t.Helper()
	audit, err := db.QueryAudit(context.Background(), record.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range audit {
		if e.Tool == "/undo" {
			out = append(out, e.Outcome)
		}
	}
	return out
}

// A restore to the checkpoint of an allowed call also takes back a later
// approved call that ran without a checkpoint: a non-approver's /undo is
// refused and names it; an approver's restores and names it as taken
// back.
func TestUndoAcrossApprovedCallWithoutCheckpointNeedsAnApprover(t *testing.T) {
	f := overLimit(t)
	before := tree(t, f.ws)
	reply, note := undo(f.m, convA, "telegram:42", false, 1)
	if !strings.Contains(reply, "Not authorised") || !strings.Contains(reply, "shell at") ||
		!strings.Contains(reply, "approved call that ran without a checkpoint") || note != "" {
		t.Fatalf("non-approver: %q %q", reply, note)
	}
	sameTree(t, "after a refused /undo", tree(t, f.ws), before)
	if got := auditOutcomes(t, f.db); len(got) != 1 || got[0] != "refused" {
		t.Fatalf("audit %v, want [refused]", got)
	}

	reply, note = undo(f.m, convA, "console:local", true, 1)
	if !strings.Contains(reply, "Restored the workspace to before write_file") ||
		!strings.Contains(reply, "also took back shell at") || !strings.Contains(reply, "which had no checkpoint") {
		t.Fatalf("approver: %q", reply)
	}
	if !strings.Contains(note, "also took back shell at") {
		t.Errorf("note %q does not tell the model", note)
	}
	sameTree(t, "after the approver's /undo", tree(t, f.ws), map[string]string{"a.txt": "v1"})
	// The marker was taken back with the checkpoint before it.
	if reply, _ := undo(f.m, convA, "console:local", true, 1); !strings.Contains(reply, "Nothing to undo") {
		t.Fatalf("a second /undo: %q", reply)
	}
}

// Another conversation's allowed call without a checkpoint, after this
// conversation's checkpoint, is also only an approver's to take back.
func TestUndoAcrossOtherConversationsCallWithoutCheckpoint(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxFile = 10 })
	f.write("a.txt", "1")
	f.call(convA, "write_file", "")
	f.write("big.bin", strings.Repeat("x", 11))
	if note := f.call(convB, "shell", ""); !strings.HasPrefix(note, "no checkpoint:") {
		t.Fatalf("note %q", note)
	}
	reply, _ := undo(f.m, convA, "console:x", false, 1)
	if !strings.Contains(reply, "another conversation") || !strings.Contains(reply, "without a checkpoint") {
		t.Fatalf("reply %q", reply)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "big.bin")); err != nil {
		t.Fatalf("a refused /undo changed the workspace: %v", err)
	}
	reply, _ = undo(f.m, convA, "console:local", true, 1)
	if !strings.Contains(reply, "other conversations: shell at") || !strings.Contains(reply, convB.Key()+", no checkpoint") {
		t.Fatalf("approver: %q", reply)
	}
	// B's last call had no checkpoint and it has none before: /undo says so.
	if reply, _ := undo(f.m, convB, "console:local", true, 1); !strings.Contains(reply, "Nothing to undo") {
		t.Fatalf("B after A's /undo: %q", reply)
	}
}

// When a conversation's only changing call had no checkpoint, /undo says
// that it cannot, and why.
func TestUndoOfOnlyCallWithoutCheckpoint(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxFile = 10 })
	f.write("big.bin", strings.Repeat("x", 11))
	f.call(convA, "shell", "")
	reply, _ := undo(f.m, convA, "console:local", true, 1)
	if !strings.Contains(reply, "Cannot undo: shell at") || !strings.Contains(reply, "big.bin is 11 B") {
		t.Fatalf("reply %q", reply)
	}
}

// The marker is in the index: a new Manager on the same database (a
// restart) still refuses, and /checkpoints lists the call.
func TestMarkerSurvivesRestart(t *testing.T) {
	f := overLimit(t)
	f.m = f.open(nil)
	before := tree(t, f.ws)
	if reply, _ := undo(f.m, convA, "telegram:42", false, 1); !strings.Contains(reply, "Not authorised") ||
		!strings.Contains(reply, "shell at") {
		t.Fatalf("non-approver after a restart: %q", reply)
	}
	sameTree(t, "after a refused /undo", tree(t, f.ws), before)
	list := f.m.CheckpointsText(context.Background(), convA)
	lines := strings.Split(list, "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "shell") ||
		!strings.Contains(lines[1], "(no checkpoint: big.bin is 11 B, over tools.checkpoints.max_file") ||
		!strings.Contains(lines[1], "[approved]") || !strings.Contains(lines[2], "write_file") {
		t.Fatalf("/checkpoints:\n%s", list)
	}
}

// A marker is never the stat cache of the next checkpoint: after it, in
// the same Manager and after a restart, a checkpoint hashes and copies the
// changed file alone, not the whole workspace again.
func TestCheckpointAfterMarkerCopiesOnlyChangedFiles(t *testing.T) {
	var pending []int
	tune := func(o *Options) {
		o.MaxFile = 100
		// A minute ahead: the files are outside the racy window.
		o.Now = func() time.Time { return time.Now().Add(time.Minute) }
		o.afterScan = func(n int) { pending = append(pending, n) }
	}
	f := newFixture(t, tune)
	past := time.Now().Add(-time.Hour)
	for i := range 20 {
		rel := fmt.Sprintf("f%02d.txt", i)
		f.write(rel, rel)
		if err := os.Chtimes(filepath.Join(f.ws, rel), past, past); err != nil {
			t.Fatal(err)
		}
	}
	big := filepath.Join(f.ws, "big.bin")
	withoutCheckpoint := func() {
		t.Helper()
		f.write("big.bin", strings.Repeat("x", 101))
		if note := f.call(convA, "shell", ""); !strings.HasPrefix(note, "no checkpoint:") {
			t.Fatalf("note %q", note)
		}
		if err := os.Remove(big); err != nil {
			t.Fatal(err)
		}
	}
	checkpointCopiesOne := func(what, changed string) {
		t.Helper()
		pending = nil
		f.write(changed, "changed")
		if note := f.call(convA, "write_file", ""); note != "" {
			t.Fatalf("%s: note %q", what, note)
		}
		if len(pending) != 1 || pending[0] != 1 {
			t.Fatalf("%s: the plan hashes %v file(s), want 1", what, pending)
		}
	}
	f.call(convA, "write_file", "")
	withoutCheckpoint()
	checkpointCopiesOne("same Manager", "f01.txt")
	withoutCheckpoint()
	f.m = f.open(tune)
	checkpointCopiesOne("after a restart", "f02.txt")
}

// Markers do not count against keep: a run of calls without a checkpoint
// leaves the conversation's real checkpoints in place; a conversation's
// markers past keep go once no live checkpoint is older than them.
func TestKeepCountsCheckpointsNotMarkers(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Keep = 2; o.MaxFile = 10 })
	f.write("a.txt", "1")
	f.call(convA, "write_file", "")
	f.write("a.txt", "2")
	f.call(convA, "write_file", "")
	f.write("big.bin", strings.Repeat("x", 11))
	for range 4 {
		f.call(convA, "shell", "")
	}
	ctx := context.Background()
	real, _ := f.db.Checkpoints(ctx, record.CheckpointFilter{Conv: convA.Key(), Recorded: true})
	all, _ := f.db.Checkpoints(ctx, record.CheckpointFilter{Conv: convA.Key()})
	if len(real) != 2 || len(all) != 6 {
		t.Fatalf("A keeps %d checkpoints and %d rows, want 2 and 6 (markers newer than a live checkpoint stay)", len(real), len(all))
	}
	// Undone, no live checkpoint is older than the markers: past keep,
	// they go at the next call.
	if reply, _ := undo(f.m, convA, "console:local", true, 2); !strings.Contains(reply, "Restored") {
		t.Fatalf("/undo 2: %q", reply)
	}
	f.write("big.bin", strings.Repeat("x", 11))
	f.call(convA, "shell", "")
	all, _ = f.db.Checkpoints(ctx, record.CheckpointFilter{Conv: convA.Key()})
	if len(all) != 4 || all[0].NoCheckpoint == "" || all[1].NoCheckpoint == "" {
		t.Fatalf("A has %d rows after its markers were undone, want the 2 checkpoints and 2 newest markers", len(all))
	}
}
