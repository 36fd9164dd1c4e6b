package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

var (
	convA = core.Conversation{Gateway: "console", Chat: "a"}
	convB = core.Conversation{Gateway: "console", Chat: "b"}
)

// fixture is a Manager over a temporary workspace and a real SQLite store,
// its blobs in the blob directory or, under TestTableBlobs, in a
// PostgreSQL database's table (tables non-nil).
type fixture struct {
	t      testing.TB
	ws     string
	db     *sqlite.DB
	m      *Manager
	dir    string
	tables *tableFixture
}

func newFixture(t testing.TB, tune func(*Options)) *fixture {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &fixture{t: t, ws: ws, db: db, dir: dir, tables: newTableFixture(t)}
	f.m = f.open(tune)
	return f
}

func (f *fixture) open(tune func(*Options)) *Manager {
	f.t.Helper()
	o := Options{Workspace: f.ws, Blobs: filepath.Join(f.dir, "g.db.blobs"), Index: f.db, Audit: f.db}
	if f.tables != nil {
		o.Blobs, o.Shared = "", true
		o.BlobStore = NewTableBlobs(f.tables.db, 0, time.Nanosecond)
	}
	if tune != nil {
		tune(&o)
	}
	m, err := New(context.Background(), o)
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.ws, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// call checkpoints before a changing call and returns the note.
func (f *fixture) call(conv core.Conversation, tool, approval string) string {
	f.t.Helper()
	note, release := f.m.Checkpoint(context.Background(), core.Action{Kind: core.ActionTool, Conv: conv, From: "console:local",
		Call: llm.ToolCall{ID: "c1", Name: tool, Args: `{"path":"x"}`}, Approval: approval})
	release()
	return note
}

// tree returns the workspace as path → content, "dir", "-> target" or
// "special".
func tree(t *testing.T, ws string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == ws {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		case d.IsDir():
			out[rel] = "dir"
		case !d.Type().IsRegular():
			out[rel] = "special" // never read: a named pipe would block
		default:
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %s = %q, want %q", what, p, got[p], w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s exists (%q), want it gone", what, p, got[p])
		}
	}
}

func undo(m *Manager, conv core.Conversation, by core.Identity, approver bool, steps int) (string, string) {
	return m.Undo(context.Background(), core.UndoRequest{Conv: conv, By: by, Approver: approver, Steps: steps})
}

func TestUndoRestoresExactBytesAndRemovesCreatedFiles(t *testing.T) {
	f := newFixture(t, nil)
	f.write("notes.txt", "first version\n")
	f.write("data/blob.bin", "\x00\x01\x02binary\xff")
	if err := os.Symlink("notes.txt", filepath.Join(f.ws, "link")); err != nil {
		t.Fatal(err)
	}
	original := tree(t, f.ws)

	// write_file changes notes.txt.
	if note := f.call(convA, "write_file", ""); note != "" {
		t.Fatalf("note %q", note)
	}
	f.write("notes.txt", "second version, longer\n")
	afterWrite := tree(t, f.ws)

	// A shell command edits, deletes and creates.
	f.call(convA, "shell", "")
	f.write("notes.txt", "third\n")
	if err := os.Remove(filepath.Join(f.ws, "data/blob.bin")); err != nil {
		t.Fatal(err)
	}
	f.write("created/deep/new.txt", "new")
	if err := os.Symlink("/etc/passwd", filepath.Join(f.ws, "escape")); err != nil {
		t.Fatal(err)
	}

	reply, note := undo(f.m, convA, "console:other", false, 1)
	sameTree(t, "first /undo", tree(t, f.ws), afterWrite)
	for _, want := range []string{"before shell", "notes.txt", "data/blob.bin", "created (removed)", "escape (removed)"} {
		if !strings.Contains(reply, want) {
			t.Errorf("reply %q lacks %q", reply, want)
		}
	}
	if !strings.Contains(note, "workspace restored to before shell") {
		t.Errorf("note %q", note)
	}

	reply, _ = undo(f.m, convA, "console:other", false, 1)
	sameTree(t, "second /undo", tree(t, f.ws), original)
	if !strings.Contains(reply, "before write_file") {
		t.Errorf("reply %q", reply)
	}
	// Both checkpoints are undone: nothing is undone twice.
	if reply, note := undo(f.m, convA, "console:other", false, 1); !strings.Contains(reply, "Nothing to undo") || note != "" {
		t.Errorf("third /undo: %q %q", reply, note)
	}
	audit, err := f.db.QueryAudit(context.Background(), record.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	undone := 0
	for _, e := range audit {
		if e.Tool == "/undo" && e.Outcome == "undone" {
			undone++
		}
	}
	if undone != 2 {
		t.Errorf("audit has %d undone rows, want 2: %+v", undone, audit)
	}
}

func TestUndoTwoGoesBackTwoCalls(t *testing.T) {
	f := newFixture(t, nil)
	f.write("a.txt", "v1")
	v1 := tree(t, f.ws)
	f.call(convA, "write_file", "")
	f.write("a.txt", "v2")
	f.call(convA, "write_file", "")
	f.write("a.txt", "v3")
	f.write("b.txt", "b")
	reply, _ := undo(f.m, convA, "console:local", false, 2)
	sameTree(t, "/undo 2", tree(t, f.ws), v1)
	if !strings.Contains(reply, "a.txt") || !strings.Contains(reply, "b.txt (removed)") {
		t.Errorf("reply %q", reply)
	}
	if reply, _ := undo(f.m, convA, "console:local", false, 2); !strings.Contains(reply, "Nothing to undo") {
		t.Errorf("reply %q", reply)
	}
}

func TestUndoOfApprovedCallNeedsAnApprover(t *testing.T) {
	f := newFixture(t, nil)
	f.write("a.txt", "before")
	f.call(convA, "shell", "K7Q2MX9P")
	f.write("a.txt", "after")
	reply, note := undo(f.m, convA, "telegram:42", false, 1)
	if !strings.Contains(reply, "Not authorised") || note != "" {
		t.Fatalf("non-approver: %q %q", reply, note)
	}
	if got := tree(t, f.ws)["a.txt"]; got != "after" {
		t.Fatalf("a refused /undo changed the workspace: %q", got)
	}
	audit, _ := f.db.QueryAudit(context.Background(), record.AuditFilter{})
	if len(audit) != 1 || audit[0].Outcome != "refused" || audit[0].RequestedBy != "telegram:42" {
		t.Fatalf("audit %+v", audit)
	}
	if reply, _ := undo(f.m, convA, "console:local", true, 1); !strings.Contains(reply, "Restored") {
		t.Fatalf("approver: %q", reply)
	}
	if got := tree(t, f.ws)["a.txt"]; got != "before" {
		t.Fatalf("a.txt = %q", got)
	}
}

func TestUndoAcrossConversationsNeedsAnApprover(t *testing.T) {
	f := newFixture(t, nil)
	f.write("a.txt", "1")
	f.call(convA, "write_file", "")
	f.write("a.txt", "2")
	f.call(convB, "write_file", "")
	f.write("a.txt", "3")
	if reply, _ := undo(f.m, convA, "console:x", false, 1); !strings.Contains(reply, "another conversation") {
		t.Fatalf("reply %q", reply)
	}
	reply, _ := undo(f.m, convA, "console:local", true, 1)
	if !strings.Contains(reply, "other conversations") || tree(t, f.ws)["a.txt"] != "1" {
		t.Fatalf("reply %q, a.txt %q", reply, tree(t, f.ws)["a.txt"])
	}
	// B's checkpoint was taken back with A's: B has nothing left to undo.
	if reply, _ := undo(f.m, convB, "console:local", true, 1); !strings.Contains(reply, "Nothing to undo") {
		t.Fatalf("B: %q", reply)
	}
}

func TestOverMaxFileNoCheckpoint(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxFile = 10 })
	f.write("big.bin", strings.Repeat("x", 11))
	a := core.Action{Kind: core.ActionTool, Conv: convA, Call: llm.ToolCall{Name: "shell"}}
	if pre := f.m.Preflight(context.Background(), a); !strings.Contains(pre, "no checkpoint: big.bin is 11 B, over tools.checkpoints.max_file") {
		t.Fatalf("preflight %q", pre)
	}
	if note := f.call(convA, "shell", ""); !strings.HasPrefix(note, "no checkpoint: big.bin") {
		t.Fatalf("note %q", note)
	}
	if list, _ := f.db.Checkpoints(context.Background(), record.CheckpointFilter{Recorded: true}); len(list) != 0 {
		t.Fatalf("%d checkpoints", len(list))
	}
	// The call is in the index as a marker, without files.
	list, _ := f.db.Checkpoints(context.Background(), record.CheckpointFilter{})
	if len(list) != 1 || !strings.HasPrefix(list[0].NoCheckpoint, "big.bin is 11 B") || list[0].Tool != "shell" {
		t.Fatalf("index %+v, want one marker of the shell call", list)
	}
}

func TestMaxTotalPrunesOldestFirst(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxTotal = 100 })
	var notes []string
	for i := range 6 {
		f.write("f.txt", strings.Repeat(string(rune('a'+i)), 30)) // 30 new bytes each time
		notes = append(notes, f.call(convA, "write_file", ""))
		if total := f.m.Total(); total > 100 {
			t.Fatalf("after call %d the blob directory holds %d bytes, over max_total 100", i, total)
		}
		if du := f.blobBytes(); du > 100 {
			t.Fatalf("after call %d: %d bytes stored", i, du)
		}
	}
	list, _ := f.db.Checkpoints(context.Background(), record.CheckpointFilter{})
	if len(list) != 3 || list[len(list)-1].ID != 4 {
		t.Fatalf("kept %+v, want the 3 newest (4..6)", list)
	}
	if !strings.Contains(notes[3], "oldest checkpoint(s)") || !strings.Contains(notes[3], "max_total") {
		t.Fatalf("the pruning call's note %q does not say so", notes[3])
	}
	// The newest checkpoint still restores.
	f.write("f.txt", "zzz")
	undo(f.m, convA, "console:local", true, 1)
	if got := tree(t, f.ws)["f.txt"]; got != strings.Repeat("f", 30) {
		t.Fatalf("f.txt = %q", got)
	}
}

func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			n += info.Size()
		}
		return nil
	})
	return n
}

func TestKeepPerConversation(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Keep = 2 })
	for i := range 4 {
		f.write("f.txt", strings.Repeat("x", i+1))
		f.call(convA, "write_file", "")
	}
	f.call(convB, "write_file", "")
	a, _ := f.db.Checkpoints(context.Background(), record.CheckpointFilter{Conv: convA.Key()})
	b, _ := f.db.Checkpoints(context.Background(), record.CheckpointFilter{Conv: convB.Key()})
	if len(a) != 2 || len(b) != 1 {
		t.Fatalf("A keeps %d, B %d", len(a), len(b))
	}
}

// A crash after the blobs are written and before the index commits
// leaves the index as it was; the orphan blobs go at the next start.
func TestCrashBetweenBlobsAndIndex(t *testing.T) {
	crash := errors.New("crash")
	f := newFixture(t, func(o *Options) { o.beforeCommit = func() error { return crash } })
	f.write("a.txt", "content that becomes an orphan blob")
	note := f.call(convA, "write_file", "")
	if !strings.HasPrefix(note, "no checkpoint:") {
		t.Fatalf("note %q", note)
	}
	if f.blobBytes() == 0 {
		t.Fatal("no blob was written before the crash point")
	}
	if list, _ := f.db.Checkpoints(context.Background(), record.CheckpointFilter{Recorded: true}); len(list) != 0 {
		t.Fatalf("index has %d checkpoints after the crash", len(list))
	}
	// Restart: the orphan is collected, and the index is usable.
	m := f.open(nil)
	if n := f.blobBytes(); n != 0 {
		t.Fatalf("%d orphan bytes left after restart", n)
	}
	f.m = m
	f.call(convA, "write_file", "")
	f.write("a.txt", "changed")
	undo(m, convA, "console:local", true, 1)
	if got := tree(t, f.ws)["a.txt"]; got != "content that becomes an orphan blob" {
		t.Fatalf("a.txt = %q", got)
	}
}

// Symlinks are recorded as links: a checkpoint never reads through one,
// and a restore never writes through one, even when a directory was
// swapped for a link that leads out of the workspace.
func TestSymlinksNeverFollowedOut(t *testing.T) {
	f := newFixture(t, nil)
	outside := filepath.Join(f.dir, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "f.txt"), []byte("outside, secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write("d/f.txt", "orig")
	if err := os.Symlink(filepath.Join(outside, "f.txt"), filepath.Join(f.ws, "out-link")); err != nil {
		t.Fatal(err)
	}
	before := tree(t, f.ws)
	f.call(convA, "shell", "")
	last, err := f.db.LatestCheckpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range last.Files {
		if e.Path == "out-link" && (e.Kind != record.KindSymlink || e.Blob != "") {
			t.Fatalf("out-link recorded as %+v", e)
		}
	}
	if n := f.blobCount(); n != 1 {
		t.Fatalf("%d blobs, want 1 (d/f.txt only)", n)
	}
	// The call swaps d for a link out of the workspace.
	if err := os.RemoveAll(filepath.Join(f.ws, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.ws, "d")); err != nil {
		t.Fatal(err)
	}
	undo(f.m, convA, "console:local", true, 1)
	sameTree(t, "after /undo", tree(t, f.ws), before)
	if b, _ := os.ReadFile(filepath.Join(outside, "f.txt")); string(b) != "outside, secret" {
		t.Fatalf("the restore wrote outside the workspace: %q", b)
	}
	if info, err := os.Lstat(filepath.Join(f.ws, "d")); err != nil || !info.IsDir() {
		t.Fatalf("d is not a directory again: %v", err)
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// A checkpoint whose blobs are gone (the blob directory deleted) is
// refused before anything in the workspace changes.
func TestMissingBlobsRefuseBeforeChanging(t *testing.T) {
	// The clock runs a minute ahead, so that keep.txt is past the racy
	// window and the stat cache names its blob.
	ahead := func(o *Options) { o.Now = func() time.Time { return time.Now().Add(time.Minute) } }
	f := newFixture(t, ahead)
	f.write("keep.txt", "unchanged throughout")
	f.write("a.txt", "saved")
	f.call(convA, "write_file", "")
	f.write("a.txt", "now")
	f.write("b.txt", "created")
	f.dropBlobs()
	reply, note := undo(f.m, convA, "console:local", true, 1)
	if !strings.Contains(reply, "Nothing was changed") || note != "" {
		t.Fatalf("reply %q, note %q", reply, note)
	}
	if got := tree(t, f.ws); got["a.txt"] != "now" || got["b.txt"] != "created" {
		t.Fatalf("the workspace changed: %v", got)
	}
	// After a restart, unchanged files whose blobs were lost are copied
	// again, not named: the next checkpoint restores.
	f.m = f.open(ahead)
	f.call(convA, "write_file", "")
	f.write("a.txt", "later")
	if reply, _ := undo(f.m, convA, "console:local", true, 1); !strings.Contains(reply, "Restored") {
		t.Fatalf("reply %q", reply)
	}
	if got := tree(t, f.ws)["a.txt"]; got != "now" {
		t.Fatalf("a.txt = %q", got)
	}
}

// The preflight note names a file as people may read it: escaped.
func TestPreflightEscapesNames(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxFile = 4 })
	f.write("evil\u202etxt.exe", "12345")
	pre := f.m.Preflight(context.Background(), core.Action{Kind: core.ActionTool, Conv: convA, Call: llm.ToolCall{Name: "shell"}})
	if strings.Contains(pre, "\u202e") || !strings.Contains(pre, `evil\u202etxt.exe`) {
		t.Fatalf("preflight %q", pre)
	}
}

// A name is one line of a reply: a newline in it is shown as \n, so that a
// tool cannot make /undo or /checkpoints show a line of its own choosing.
func TestRepliesShowNewlinesInNames(t *testing.T) {
	f := newFixture(t, nil)
	f.call(convA, "shell", "")
	evil := "x\n• forged.txt\nNot authorised"
	f.write(evil, "created")
	lines := func(what, s string) {
		t.Helper()
		for _, l := range strings.Split(s, "\n") {
			if l == "• forged.txt" || strings.HasPrefix(l, "Not authorised") {
				t.Errorf("%s shows the line %q a file name wrote:\n%s", what, l, s)
			}
		}
		if !strings.Contains(s, `x\n• forged.txt\nNot authorised`) {
			t.Errorf("%s does not show the name escaped:\n%s", what, s)
		}
	}
	lines("/checkpoints", f.m.CheckpointsText(context.Background(), convA))
	reply, _ := undo(f.m, convA, "console:local", true, 1)
	lines("/undo", reply)
	if _, err := os.Lstat(filepath.Join(f.ws, evil)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the created file is still there: %v", err)
	}
}

// A workspace reached through a symbolic link (tools.workspace a link, as
// the file tools allow) is recorded and restored like any other.
func TestWorkspaceThroughSymlink(t *testing.T) {
	f := newFixture(t, nil)
	link := filepath.Join(f.dir, "workspace-link")
	if err := os.Symlink(f.ws, link); err != nil {
		t.Fatal(err)
	}
	f.m = f.open(func(o *Options) { o.Workspace = link })
	f.write("a.txt", "v1")
	before := tree(t, f.ws)
	f.call(convA, "write_file", "")
	f.write("a.txt", "v2")
	f.write("b.txt", "created")
	reply, _ := undo(f.m, convA, "console:local", false, 1)
	sameTree(t, "after /undo", tree(t, f.ws), before)
	if !strings.Contains(reply, "a.txt") || !strings.Contains(reply, "b.txt (removed)") {
		t.Fatalf("reply %q", reply)
	}
}

// sameTickIndex hands out checkpoints whose entry for path carries the
// file's current stat: as if the file had been changed again, after the
// checkpoint, within the same tick of the file system's clock (same size,
// times and inode, other bytes).
type sameTickIndex struct {
	*sqlite.DB
	ws, path string
}

func (x sameTickIndex) Checkpoint(ctx context.Context, id int64) (record.Checkpoint, error) {
	c, err := x.DB.Checkpoint(ctx, id)
	if err != nil {
		return c, err
	}
	info, err := os.Lstat(filepath.Join(x.ws, x.path))
	if err != nil {
		return c, err
	}
	for i, f := range c.Files {
		if f.Path == x.path {
			c.Files[i].MTime = info.ModTime()
			c.Files[i].Inode, c.Files[i].CTime = fileIDs(info)
		}
	}
	return c, nil
}

// A file last changed within the racy window before its checkpoint is
// hashed by the restore, not trusted by its stat: a change in the same
// clock tick leaves size, times and inode as recorded.
func TestRestoreHashesRacyFiles(t *testing.T) {
	f := newFixture(t, nil)
	f.m = f.open(func(o *Options) { o.Index = sameTickIndex{DB: f.db, ws: f.ws, path: "a.txt"} })
	f.write("a.txt", "original")
	f.call(convA, "write_file", "")
	fh, err := os.OpenFile(filepath.Join(f.ws, "a.txt"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString("modified"); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	reply, _ := undo(f.m, convA, "console:local", true, 1)
	if got := tree(t, f.ws)["a.txt"]; got != "original" {
		t.Fatalf("a.txt = %q after /undo (%q)", got, reply)
	}
}

// Every directory a checkpoint creates in the blob store (the store
// itself, a blob's two-letter directory) is made durable in its parent
// before the index names blobs in it: a crash cannot lose a directory of
// blobs the index names.
func TestNewBlobDirectoriesAreSynced(t *testing.T) {
	var synced []string
	record := func(o *Options) {
		o.Blobs = filepath.Join(o.Blobs, "nested")
		o.syncDir = func(dir string) error {
			synced = append(synced, dir)
			return syncDir(dir)
		}
	}
	f := newFixture(t, record)
	blobs := f.m.o.Blobs
	if !slices.Contains(synced, filepath.Dir(blobs)) || !slices.Contains(synced, filepath.Dir(filepath.Dir(blobs))) {
		t.Fatalf("creating %s synced %q, want its parents", blobs, synced)
	}
	synced = nil
	f.write("a.txt", "one blob")
	if note := f.call(convA, "write_file", ""); note != "" {
		t.Fatal(note)
	}
	last, err := f.db.LatestCheckpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Dir(f.m.blobPath(last.Files[0].Blob))
	if !slices.Contains(synced, sub) || !slices.Contains(synced, blobs) {
		t.Fatalf("the checkpoint synced %q, want %s (the blob's entry) and %s (the new directory's entry)", synced, sub, blobs)
	}
}

// A file that grows between the walk and its copy (a process still
// writing it) cannot take the blob directory past max_total: that
// checkpoint is not made, and the call says so.
func TestGrowingFileNeverPassesMaxTotal(t *testing.T) {
	var grow func()
	f := newFixture(t, func(o *Options) {
		o.MaxTotal = 100
		o.afterScan = func(int) {
			if grow != nil {
				grow()
			}
		}
	})
	f.write("log.txt", strings.Repeat("a", 50))
	grow = func() { f.write("log.txt", strings.Repeat("b", 150)) }
	note := f.call(convA, "shell", "")
	if !strings.HasPrefix(note, "no checkpoint: log.txt grew while it was recorded") {
		t.Errorf("note %q", note)
	}
	if total, du := f.m.Total(), f.blobBytes(); total > 100 || du > 100 {
		t.Fatalf("the blob directory holds %d bytes (%d counted), over max_total 100", du, total)
	}
	// The next checkpoint, of a workspace that fits, is made.
	grow = nil
	f.write("log.txt", strings.Repeat("c", 60))
	if note := f.call(convA, "shell", ""); note != "" {
		t.Fatalf("note %q", note)
	}
}

// Special files a call created (a named pipe, a socket) are removed by
// /undo like any created file, and one standing where the checkpoint had
// a directory does not block the restore.
func TestUndoRemovesCreatedSpecialFiles(t *testing.T) {
	f := newFixture(t, nil)
	f.write("d/kept.txt", "kept")
	before := tree(t, f.ws)
	f.call(convA, "shell", "")
	if err := syscall.Mkfifo(filepath.Join(f.ws, "pipe"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(f.ws, "d")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(f.ws, "d"), 0o644); err != nil {
		t.Fatal(err)
	}
	reply, _ := undo(f.m, convA, "console:local", true, 1)
	if !strings.Contains(reply, "Restored") || !strings.Contains(reply, "pipe (removed)") {
		t.Errorf("reply %q", reply)
	}
	sameTree(t, "after /undo", tree(t, f.ws), before)
}

// A checkpoint of a 10,000-file workspace with one file changed since the
// last copies exactly one blob: the unchanged files are matched by their
// stat, not hashed and copied again (the benchmark of the same name
// measures it).
func TestCheckpoint10000FilesOneChangedCopiesOneBlob(t *testing.T) {
	// The clock runs a minute ahead: the files are outside the racy window.
	f := newFixture(t, func(o *Options) { o.Now = func() time.Time { return time.Now().Add(time.Minute) } })
	past := time.Now().Add(-time.Hour)
	for d := range 100 {
		for i := range 100 {
			rel := fmt.Sprintf("d%03d/f%03d.txt", d, i)
			f.write(rel, fmt.Sprintf("file %05d", d*100+i))
			if err := os.Chtimes(filepath.Join(f.ws, rel), past, past); err != nil {
				t.Fatal(err)
			}
		}
	}
	if note := f.call(convA, "write_file", ""); note != "" {
		t.Fatal(note)
	}
	blobs := filepath.Join(f.dir, "g.db.blobs")
	before, total := countFiles(t, blobs), f.m.Total()
	if before != 10_000 {
		t.Fatalf("the first checkpoint stored %d blobs, want 10000", before)
	}
	f.write("d050/f050.txt", "changed content")
	// The plan hashes and copies the changed file alone.
	f.m.mu.Lock()
	plan, err := f.m.scan(context.Background(), f.m.last)
	f.m.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.pending) != 1 || plan.files[plan.pending[0]].Path != "d050/f050.txt" {
		t.Fatalf("the plan reads %d files, want d050/f050.txt alone", len(plan.pending))
	}
	if note := f.call(convA, "write_file", ""); note != "" {
		t.Fatal(note)
	}
	if n := countFiles(t, blobs) - before; n != 1 {
		t.Fatalf("the second checkpoint copied %d blobs, want 1", n)
	}
	last, err := f.db.LatestCheckpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if grew := f.m.Total() - total; last.Added != int64(len("changed content")) || grew != last.Added {
		t.Fatalf("the second checkpoint added %d bytes (the store grew by %d), want %d", last.Added, grew, len("changed content"))
	}
}

// gatedIndex holds the first listing of a conversation's live checkpoints
// until gate is closed, so that an /undo is caught in the middle.
type gatedIndex struct {
	*sqlite.DB
	entered atomic.Bool
	gate    chan struct{}
}

func (x *gatedIndex) Checkpoints(ctx context.Context, f record.CheckpointFilter) ([]record.Checkpoint, error) {
	if f.Live && f.Conv != "" && x.entered.CompareAndSwap(false, true) {
		<-x.gate
	}
	return x.DB.Checkpoints(ctx, f)
}

// Two simultaneous /undo commands take back one call: the second is told
// that an /undo is under way (not that a tool call runs), and changes
// nothing.
func TestSimultaneousUndoOnce(t *testing.T) {
	f := newFixture(t, nil)
	idx := &gatedIndex{DB: f.db, gate: make(chan struct{})}
	f.m = f.open(func(o *Options) { o.Index = idx })
	f.write("a.txt", "v1")
	f.call(convA, "write_file", "")
	f.write("a.txt", "v2")
	f.call(convA, "write_file", "")
	f.write("a.txt", "v3")
	first := make(chan string, 1)
	go func() {
		reply, _ := undo(f.m, convA, "console:local", true, 1)
		first <- reply
	}()
	testutil.WaitFor(t, "the first /undo to be under way", idx.entered.Load)
	second, note := undo(f.m, convA, "console:local", true, 1)
	close(idx.gate)
	if !strings.Contains(second, "Another /undo") || note != "" {
		t.Errorf("the second /undo: %q, note %q", second, note)
	}
	if reply := <-first; !strings.Contains(reply, "Restored") {
		t.Errorf("the first /undo: %q", reply)
	}
	if got := tree(t, f.ws)["a.txt"]; got != "v2" {
		t.Fatalf("a.txt = %q, want v2 (one call taken back)", got)
	}
}

// A restore makes what it changed durable before /undo answers: the
// directory of every path it changed, created or removed is synced.
func TestRestoreSyncsWhatItChanged(t *testing.T) {
	var synced []string
	f := newFixture(t, func(o *Options) {
		o.syncDir = func(dir string) error {
			synced = append(synced, dir)
			return syncDir(dir)
		}
	})
	f.write("a/b.txt", "one")
	f.write("gone.txt", "two")
	f.write("same/kept.txt", "three")
	f.call(convA, "shell", "")
	f.write("a/b.txt", "changed")
	f.write("c/new.txt", "created")
	if err := os.Remove(filepath.Join(f.ws, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	synced = nil
	if reply, _ := undo(f.m, convA, "console:local", true, 1); !strings.Contains(reply, "Restored") {
		t.Fatal(reply)
	}
	for _, dir := range []string{filepath.Join(f.ws, "a"), f.ws} {
		if !slices.Contains(synced, dir) {
			t.Errorf("the restore synced %q; want %s among them", synced, dir)
		}
	}
	if slices.Contains(synced, filepath.Join(f.ws, "same")) {
		t.Errorf("the restore synced %q, the untouched directory same/ too", synced)
	}
}

// A file name is bytes, not text: /undo must not rename a file whose name
// is not UTF-8 (the manifest's JSON once stored it with U+FFFD, so the
// restore removed the file and wrote it back under that other name).
func TestUndoKeepsNamesThatAreNotUTF8(t *testing.T) {
	f := newFixture(t, nil)
	f.write("caf\xe9.txt", "latin-1 name\n")
	if err := os.Symlink("t\xffrget", filepath.Join(f.ws, "link\x80")); err != nil {
		t.Fatal(err)
	}
	before := tree(t, f.ws)
	f.call(convA, "write_file", "")
	f.write("new.txt", "created\n")
	reply, _ := undo(f.m, convA, "console:local", false, 1)
	sameTree(t, "after /undo", tree(t, f.ws), before)
	if strings.Contains(reply, "caf") || strings.Contains(reply, "link") {
		t.Errorf("the reply names files nothing changed:\n%s", reply)
	}
}

// A checkpoint whose saved content is damaged on disk (a bit flipped, a
// blob truncated) is refused before anything in the workspace changes:
// the restore used to remove the files created since, then stop at the
// damaged blob, so work the checkpoint does not hold was lost for a
// restore that never happened.
func TestDamagedBlobRefusesBeforeChanging(t *testing.T) {
	for _, damage := range []struct {
		name string
		do   func(b []byte) []byte
	}{
		{"flipped", func(b []byte) []byte { b[0] ^= 1; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
	} {
		t.Run(damage.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.write("a.txt", "saved content of a\n")
			f.call(convA, "write_file", "")
			f.write("a.txt", "changed since\n")
			f.write("mywork.txt", "written since, in no checkpoint\n")
			before := tree(t, f.ws)
			full, err := f.db.LatestCheckpoint(context.Background())
			if err != nil || len(full.Files) != 1 {
				t.Fatalf("checkpoint %+v, %v", full, err)
			}
			f.damageBlob(full.Files[0].Blob, damage.do)
			reply, note := undo(f.m, convA, "console:local", true, 1)
			if !strings.Contains(reply, "damaged") || !strings.Contains(reply, "a.txt") || !strings.Contains(reply, "Nothing was changed") || note != "" {
				t.Errorf("reply %q, note %q", reply, note)
			}
			sameTree(t, "after a refused /undo", tree(t, f.ws), before)
			if got := auditOutcomes(t, f.db); !slices.Equal(got, []string{"failed"}) {
				t.Errorf("audit %v, want [failed]", got)
			}
		})
	}
}

// A file a call rewrote with the same bytes (a formatter, touch) gets its
// recorded modification time back too, as docs/undo.md promises: build
// tools decide on it.
func TestUndoRestoresModificationTimeOfSameContent(t *testing.T) {
	f := newFixture(t, nil)
	f.write("main.c", "int main(void) { return 0; }\n")
	p := filepath.Join(f.ws, "main.c")
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	f.call(convA, "shell", "")
	f.write("main.c", "int main(void) { return 0; }\n")
	undo(f.m, convA, "console:local", false, 1)
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !info.ModTime().Equal(old) {
		t.Errorf("main.c modified %v after /undo, want %v", info.ModTime(), old)
	}
}

// A restore never changes a file outside the workspace through a hard
// link a later command planted: a file whose content is the recorded one
// but whose mode or time differ is replaced, not changed in place (a
// chmod through the link made the outside file world-readable).
func TestUndoNeverChangesAFileOutsideThroughAHardLink(t *testing.T) {
	f := newFixture(t, nil)
	const secret = "-----BEGIN PRIVATE KEY-----\n"
	f.write("key.pem", secret) // 0644 in the checkpoint
	f.call(convA, "shell", "")
	outside := filepath.Join(f.dir, "id_key")
	if err := os.WriteFile(outside, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(f.ws, "key.pem")
	if err := os.Remove(in); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, in); err != nil {
		t.Skipf("no hard link: %v", err)
	}
	outBefore, err := os.Stat(outside)
	if err != nil {
		t.Fatal(err)
	}
	undo(f.m, convA, "console:local", false, 1)
	outAfter, err := os.Stat(outside)
	if err != nil {
		t.Fatal(err)
	}
	if outAfter.Mode() != 0o600 || !outAfter.ModTime().Equal(outBefore.ModTime()) {
		t.Errorf("the file outside is %v modified %v, was %v modified %v", outAfter.Mode(), outAfter.ModTime(), outBefore.Mode(), outBefore.ModTime())
	}
	inAfter, err := os.Stat(in)
	if err != nil {
		t.Fatal(err)
	}
	if inAfter.Mode() != 0o644 || os.SameFile(inAfter, outAfter) {
		t.Errorf("key.pem is %v, the same file as outside: %v; want 0644, its own", inAfter.Mode(), os.SameFile(inAfter, outAfter))
	}
	if b, _ := os.ReadFile(in); string(b) != secret {
		t.Errorf("key.pem = %q", b)
	}
}
