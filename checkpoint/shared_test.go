package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// sharedManager is one instance's Manager on the database dsn names, its
// blobs in the database (collected with no idle time unless tune says
// otherwise), over the workspace ws all instances mount.
func sharedManager(t *testing.T, dsn, ws string, tune func(*Options)) (*Manager, *postgres.DB) {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	o := Options{Workspace: ws, Index: db, Audit: db, Shared: true, BlobStore: NewTableBlobs(db, 0, time.Nanosecond)}
	if tune != nil {
		tune(&o)
	}
	m, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return m, db
}

func sharedCall(t *testing.T, m *Manager, conv core.Conversation) string {
	t.Helper()
	note, release := m.Checkpoint(context.Background(), core.Action{Kind: core.ActionTool, Conv: conv, From: "console:local",
		Call: llm.ToolCall{ID: "c1", Name: "write_file", Args: `{"path":"x"}`}})
	release()
	return note
}

// A checkpoint taken through instance A is restored through instance B,
// another store on the same database (/undo from another instance), with
// the right bytes; B's next checkpoint reuses A's blobs.
func TestUndoFromAnotherInstance(t *testing.T) {
	dsn := pgtest.DSN(t)
	ws := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := sharedManager(t, dsn, ws, nil)
	b, dbB := sharedManager(t, dsn, ws, nil)

	write("notes.txt", "first version\n")
	write("data/blob.bin", "\x00\x01\x02binary\xff")
	original := tree(t, ws)
	if note := sharedCall(t, a, convA); note != "" {
		t.Fatalf("checkpoint through A: %q", note)
	}
	write("notes.txt", "changed by the call\n")
	write("created.txt", "new")

	reply, _ := undo(b, convA, "console:local", true, 1)
	if !strings.Contains(reply, "Restored") {
		t.Fatalf("/undo through B: %q", reply)
	}
	sameTree(t, "after /undo through B", tree(t, ws), original)
	list, err := dbB.Checkpoints(context.Background(), record.CheckpointFilter{Live: true})
	if err != nil || len(list) != 0 {
		t.Fatalf("live checkpoints after the undo: %+v, %v", list, err)
	}

	// B's checkpoint of the same content adds no blob: the content is
	// stored once, whichever instance stored it.
	before := b.blobs.(*tableBlobs)
	total, err := before.Total(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if note := sharedCall(t, b, convB); note != "" {
		t.Fatalf("checkpoint through B: %q", note)
	}
	if after, err := before.Total(context.Background()); err != nil || after != total {
		t.Fatalf("the blobs grew from %d to %d bytes (%v) for a content already stored", total, after, err)
	}
}

// Collection in the database: blobs no checkpoint names are deleted when
// an instance starts, unless they were stored or found in use within the
// idle time (a checkpoint another instance is taking names them soon).
func TestSharedBlobsCollectOrphans(t *testing.T) {
	dsn := pgtest.DSN(t)
	ws := t.TempDir()
	a, db := sharedManager(t, dsn, ws, nil)
	ctx := context.Background()
	named := strings.Repeat("n", 40)
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(named), 0o644); err != nil {
		t.Fatal(err)
	}
	if note := sharedCall(t, a, convA); note != "" {
		t.Fatal(note)
	}
	// An orphan, as a crash between its put and the index row leaves.
	if _, err := db.PutCheckpointBlob(ctx, strings.Repeat("0", 64), []byte("orphan")); err != nil {
		t.Fatal(err)
	}
	// Another instance starting now spares it: it is fresh.
	b, _ := sharedManager(t, dsn, ws, func(o *Options) { o.BlobStore = NewTableBlobs(db, 0, DefaultBlobIdle) })
	if _, err := db.CheckpointBlob(ctx, strings.Repeat("0", 64)); err != nil {
		t.Fatalf("a fresh orphan was collected: %v", err)
	}
	if got := b.Total(); got != int64(len(named)+len("orphan")) {
		t.Fatalf("Total = %d, want %d", got, len(named)+len("orphan"))
	}
	// One with no idle time deletes it, and keeps the named blob.
	c, _ := sharedManager(t, dsn, ws, nil)
	if _, err := db.CheckpointBlob(ctx, strings.Repeat("0", 64)); err == nil {
		t.Fatal("the orphan was not collected")
	}
	if got := c.Total(); got != int64(len(named)) {
		t.Fatalf("Total = %d, want %d", got, len(named))
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if reply, _ := undo(c, convA, "console:local", true, 1); !strings.Contains(reply, "Restored") {
		t.Fatalf("/undo after the collection: %q", reply)
	}
}

// An instance that needs room collects first the blobs another instance
// left to collect (checkpoints it pruned past keep), rather than pruning
// its own oldest checkpoint for room that is in fact free.
func TestSharedMaxTotalCollectsOthersOrphansFirst(t *testing.T) {
	dsn := pgtest.DSN(t)
	ws := t.TempDir()
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, db := sharedManager(t, dsn, ws, func(o *Options) { o.MaxTotal = 100 })
	b, _ := sharedManager(t, dsn, ws, func(o *Options) { o.MaxTotal, o.Keep = 100, 1 })
	write(strings.Repeat("a", 40))
	if note := sharedCall(t, a, convA); note != "" {
		t.Fatal(note)
	}
	write(strings.Repeat("b", 40))
	if note := sharedCall(t, b, convB); note != "" {
		t.Fatal(note)
	}
	write(strings.Repeat("c", 10))
	if note := sharedCall(t, b, convB); note != "" { // prunes B's first past keep: 40 bytes to collect
		t.Fatal(note)
	}
	write(strings.Repeat("d", 30))
	if note := sharedCall(t, a, convA); note != "" {
		t.Fatalf("A's second checkpoint pruned for room the orphans held: %q", note)
	}
	list, err := db.Checkpoints(context.Background(), record.CheckpointFilter{Conv: convA.Key()})
	if err != nil || len(list) != 2 {
		t.Fatalf("A's checkpoints: %d, %v; want both", len(list), err)
	}
	if got := a.Total(); got != 80 {
		t.Fatalf("Total = %d, want 80 (a, c, d)", got)
	}
}
