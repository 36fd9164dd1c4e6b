package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// orphanFixture is a fixture whose blob store holds an orphan: the blobs
// of a checkpoint whose index row a crash kept from committing.
func orphanFixture(t *testing.T, tune func(*Options)) *fixture {
	t.Helper()
	crash := errors.New("crash")
	f := newFixture(t, func(o *Options) {
		o.beforeCommit = func() error { return crash }
		if tune != nil {
			tune(o)
		}
	})
	f.write("orphan.txt", strings.Repeat("o", 40))
	if note := f.call(convA, "write_file", ""); !strings.HasPrefix(note, "no checkpoint:") {
		t.Fatalf("note %q; want the crash's", note)
	}
	if f.blobBytes() == 0 {
		t.Fatal("no orphan blob was written before the crash point")
	}
	if err := os.Remove(filepath.Join(f.ws, "orphan.txt")); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCollectLaterLeavesTheWalkToCollect: with Options.CollectLater, New
// neither walks nor deletes the blob store (the bot's start-up does not
// wait for it); Collect then does what New would have done, once.
func TestCollectLaterLeavesTheWalkToCollect(t *testing.T) {
	f := orphanFixture(t, nil)
	orphan := f.blobBytes()
	m := f.open(func(o *Options) { o.CollectLater = true })
	if got := f.blobBytes(); got != orphan {
		t.Fatalf("New with CollectLater changed the blob store from %d to %d bytes", orphan, got)
	}
	if err := m.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.blobBytes(); got != 0 {
		t.Fatalf("%d orphan bytes left after Collect", got)
	}
	if got := m.Total(); got != 0 {
		t.Fatalf("Total = %d after Collect; want 0", got)
	}
}

// TestCheckpointBeforeCollectCountsFirst: a checkpoint taken before the
// deferred collection runs it first, so that tools.checkpoints.max_total
// holds (the blob store's size is known before the plan) and the orphans
// go; the collection that comes after it has nothing left to do.
func TestCheckpointBeforeCollectCountsFirst(t *testing.T) {
	const maxTotal = 100
	f := orphanFixture(t, func(o *Options) { o.MaxTotal = maxTotal })
	// Two checkpoints of 40 new bytes each, on a manager that collected.
	f.m = f.open(func(o *Options) { o.MaxTotal = maxTotal })
	for _, c := range []string{"a", "b"} {
		f.write("f.txt", strings.Repeat(c, 40))
		if note := f.call(convA, "write_file", ""); note != "" {
			t.Fatalf("note %q", note)
		}
	}
	stored := f.blobBytes()
	// Restart with the collection deferred; a third checkpoint needs room.
	f.m = f.open(func(o *Options) { o.MaxTotal, o.CollectLater = maxTotal, true })
	f.write("f.txt", strings.Repeat("c", 40))
	note := f.call(convA, "write_file", "")
	if !strings.Contains(note, "oldest checkpoint(s)") {
		t.Fatalf("note %q; want the oldest pruned for room (%d bytes stored before)", note, stored)
	}
	if got := f.blobBytes(); got > maxTotal {
		t.Fatalf("%d bytes stored, over max_total %d", got, maxTotal)
	}
	after := f.blobBytes()
	if err := f.m.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.blobBytes(); got != after {
		t.Fatalf("Collect after a checkpoint changed the blob store from %d to %d bytes", after, got)
	}
	if got := f.m.Total(); got != after {
		t.Fatalf("Total = %d, want %d", got, after)
	}
}
