package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// CheckpointContract tests a store.Checkpoints (checkpoint.Index): a
// checkpoint and its manifest round-trip exactly; listings are newest
// first, filtered by conversation, liveness and ID, limited, without
// files; MarkUndone marks from an ID on and never twice; deleted
// checkpoints are gone; CheckpointBlobs names the blobs of what is left; a
// marker (NoCheckpoint) round-trips without files, is listed unless
// Recorded, and is never the LatestCheckpoint; paths and link targets that
// are not UTF-8 round-trip byte for byte.
func CheckpointContract(t *testing.T, newStore func(t *testing.T) store.Checkpoints) {
	t.Helper()
	t0 := time.Date(2026, 11, 25, 14, 2, 0, 123, time.UTC)
	f := &checkpointFixture{s: newStore(t), t0: t0,
		a: core.Conversation{Gateway: "alpha", Chat: "-100", Thread: "7"},
		b: core.Conversation{Gateway: "beta", Chat: "C1"},
		files: []record.CheckpointFile{
			{Path: "a.txt", Kind: record.KindFile, Mode: 0o644, Size: 3, MTime: t0, CTime: t0.Add(time.Second), Inode: 42, Blob: "aa11"},
			{Path: "d", Kind: record.KindDir, Mode: 0o755},
			{Path: "d/b.bin", Kind: record.KindFile, Mode: 0o600, Size: 9, MTime: t0, Blob: "bb22"},
			{Path: "link", Kind: record.KindSymlink, Mode: 0o777, Target: "../outside"},
		}}
	runSteps(t,
		contractStep{"empty store", f.emptyStore},
		contractStep{"round trip", f.roundTrip},
		contractStep{"listings", f.listings},
		contractStep{"MarkUndone", f.markUndone},
		contractStep{"a marker", f.marker},
		contractStep{"deleted, and the blobs of what is left", f.deleteAndBlobs},
		contractStep{"names that are not UTF-8", f.oddNames},
	)
}

// checkpointFixture is CheckpointContract's state, shared by its steps:
// the store, the time and conversations of its checkpoints, and their
// IDs as they are added.
type checkpointFixture struct {
	s     store.Checkpoints
	t0    time.Time
	a, b  core.Conversation
	files []record.CheckpointFile // the first checkpoint's manifest
	// id1..id3 are checkpoints (a's, b's, a's), id4 b's marker.
	id1, id2, id3, id4 int64
}

// ids lists the IDs of the checkpoints filter selects, checking that the
// listing carries no files.
func (f *checkpointFixture) ids(t *testing.T, filter record.CheckpointFilter) []int64 {
	t.Helper()
	list, err := f.s.Checkpoints(context.Background(), filter)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, c := range list {
		if c.Files != nil {
			t.Fatalf("a listing carries files")
		}
		out = append(out, c.ID)
	}
	return out
}

// emptyStore checks that an empty store has no latest checkpoint.
func (f *checkpointFixture) emptyStore(t *testing.T) {
	if _, err := f.s.LatestCheckpoint(context.Background()); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("LatestCheckpoint of an empty store: %v, want ErrNotFound", err)
	}
}

// roundTrip adds three checkpoints and checks that their IDs grow, the
// first and its manifest round-trip exactly, and the third is the
// latest.
func (f *checkpointFixture) roundTrip(t *testing.T) {
	ctx := context.Background()
	s, t0 := f.s, f.t0
	first := record.Checkpoint{Conv: f.a, Tool: "write_file", Args: `{"path":"a.txt"}`, CallID: "c1",
		RequestedBy: "alpha:1", Approval: "K7Q2MX9P", Created: t0, Added: 12, Files: f.files}
	id1, err := s.AddCheckpoint(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	id2, _ := s.AddCheckpoint(ctx, record.Checkpoint{Conv: f.b, Tool: "shell", Args: "{}", RequestedBy: "beta:U1", Created: t0.Add(time.Minute),
		Files: f.files[:1]})
	id3, _ := s.AddCheckpoint(ctx, record.Checkpoint{Conv: f.a, Tool: "shell", Args: "{}", RequestedBy: "alpha:1", Created: t0.Add(2 * time.Minute),
		Files: []record.CheckpointFile{{Path: "c.txt", Kind: record.KindFile, Size: 1, Blob: "cc33"}}})
	f.id1, f.id2, f.id3 = id1, id2, id3
	if !(id1 < id2 && id2 < id3) {
		t.Fatalf("IDs %d, %d, %d do not grow", id1, id2, id3)
	}
	got, err := s.Checkpoint(ctx, id1)
	if err != nil {
		t.Fatal(err)
	}
	first.ID = id1
	if !reflect.DeepEqual(got, first) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, first)
	}
	if latest, err := s.LatestCheckpoint(ctx); err != nil || latest.ID != id3 || len(latest.Files) != 1 {
		t.Fatalf("LatestCheckpoint = #%d (%d files), %v; want #%d", latest.ID, len(latest.Files), err, id3)
	}
}

// listings checks that listings are newest first, filtered by
// conversation and ID, and limited.
func (f *checkpointFixture) listings(t *testing.T) {
	id1, id2, id3 := f.id1, f.id2, f.id3
	for _, c := range []struct {
		f    record.CheckpointFilter
		want []int64
	}{
		{record.CheckpointFilter{}, []int64{id3, id2, id1}},
		{record.CheckpointFilter{Conv: f.a.Key()}, []int64{id3, id1}},
		{record.CheckpointFilter{Conv: f.a.Key(), Limit: 1}, []int64{id3}},
		{record.CheckpointFilter{After: id1}, []int64{id3, id2}},
	} {
		if got := f.ids(t, c.f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Checkpoints(%+v) = %v, want %v", c.f, got, c.want)
		}
	}
}

// markUndone checks that MarkUndone marks from an ID on, never twice,
// with its time and sender, and that a live listing leaves them out.
func (f *checkpointFixture) markUndone(t *testing.T) {
	ctx := context.Background()
	s, t0 := f.s, f.t0
	if n, err := s.MarkUndone(ctx, f.id2, "alpha:9", t0.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("MarkUndone from #%d = %d, %v; want 2", f.id2, n, err)
	}
	if n, _ := s.MarkUndone(ctx, f.id2, "alpha:9", t0.Add(2*time.Hour)); n != 0 {
		t.Fatalf("a second MarkUndone marked %d", n)
	}
	if got := f.ids(t, record.CheckpointFilter{Live: true}); !reflect.DeepEqual(got, []int64{f.id1}) {
		t.Fatalf("live %v, want [%d]", got, f.id1)
	}
	if c, _ := s.Checkpoint(ctx, f.id3); !c.Undone.Equal(t0.Add(time.Hour)) || c.UndoneBy != "alpha:9" {
		t.Fatalf("undone %v by %q", c.Undone, c.UndoneBy)
	}
}

// marker checks that a marker of a call that ran without a checkpoint
// round-trips, is listed unless Recorded, but is never the latest
// checkpoint.
func (f *checkpointFixture) marker(t *testing.T) {
	ctx := context.Background()
	s := f.s
	marker := record.Checkpoint{Conv: f.b, Tool: "shell", Args: `{"command":"make"}`, CallID: "c4", RequestedBy: "beta:U1",
		Approval: "Q4W8ZT2M", Created: f.t0.Add(3 * time.Minute), NoCheckpoint: "big.bin is 20 MiB, over tools.checkpoints.max_file (16 MiB)"}
	id4, err := s.AddCheckpoint(ctx, marker)
	if err != nil || id4 <= f.id3 {
		t.Fatalf("AddCheckpoint(marker) = %d, %v", id4, err)
	}
	f.id4 = id4
	marker.ID = id4
	if got, err := s.Checkpoint(ctx, id4); err != nil || !reflect.DeepEqual(got, marker) {
		t.Fatalf("marker round trip:\n got %+v, %v\nwant %+v", got, err, marker)
	}
	if latest, err := s.LatestCheckpoint(ctx); err != nil || latest.ID != f.id3 {
		t.Fatalf("LatestCheckpoint = #%d, %v; want #%d (the marker skipped)", latest.ID, err, f.id3)
	}
	if got := f.ids(t, record.CheckpointFilter{Conv: f.b.Key()}); !reflect.DeepEqual(got, []int64{id4, f.id2}) {
		t.Fatalf("B's rows %v, want [%d %d]", got, id4, f.id2)
	}
	if got := f.ids(t, record.CheckpointFilter{Conv: f.b.Key(), Recorded: true}); !reflect.DeepEqual(got, []int64{f.id2}) {
		t.Fatalf("B's recorded checkpoints %v, want [%d]", got, f.id2)
	}
}

// deleteAndBlobs checks that the marker names no blob, that
// CheckpointBlobs names the blobs of what is left, and that deleted
// checkpoints are gone.
func (f *checkpointFixture) deleteAndBlobs(t *testing.T) {
	ctx := context.Background()
	s := f.s
	if err := s.DeleteCheckpoints(ctx, f.id4); err != nil {
		t.Fatal(err)
	}
	blobs, err := s.CheckpointBlobs(ctx)
	if err != nil || !reflect.DeepEqual(blobs, map[string]int64{"aa11": 3, "bb22": 9, "cc33": 1}) {
		t.Fatalf("CheckpointBlobs = %v, %v", blobs, err)
	}
	if err := s.DeleteCheckpoints(ctx, f.id1, f.id3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checkpoint(ctx, f.id1); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("deleted checkpoint: %v", err)
	}
	if blobs, _ := s.CheckpointBlobs(ctx); !reflect.DeepEqual(blobs, map[string]int64{"aa11": 3}) {
		t.Fatalf("CheckpointBlobs after delete = %v", blobs)
	}
}

// oddNames checks that names and link targets that are not UTF-8, or
// hold a newline, round-trip byte for byte: a file name is any bytes but
// '/' and NUL.
func (f *checkpointFixture) oddNames(t *testing.T) {
	ctx := context.Background()
	t0 := f.t0
	odd := record.Checkpoint{Conv: f.a, Tool: "shell", Args: "{}", RequestedBy: "alpha:1", Created: t0.Add(4 * time.Minute),
		Files: []record.CheckpointFile{
			{Path: "caf\xe9.txt", Kind: record.KindFile, Mode: 0o644, Size: 1, MTime: t0, Blob: "dd44"},
			{Path: "d\xff\xfe", Kind: record.KindDir, Mode: 0o755},
			{Path: "line\nbreak", Kind: record.KindSymlink, Mode: 0o777, Target: "t\x80rget"},
		}}
	id5, err := f.s.AddCheckpoint(ctx, odd)
	if err != nil {
		t.Fatal(err)
	}
	odd.ID = id5
	if got, err := f.s.Checkpoint(ctx, id5); err != nil || !reflect.DeepEqual(got, odd) {
		t.Fatalf("round trip of names that are not UTF-8:\n got %+v, %v\nwant %+v", got.Files, err, odd.Files)
	}
}
