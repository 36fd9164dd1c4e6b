package checkpoint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestUndoRestoresReadOnlyDirectories: a read-only directory (0555) with
// files in it, deleted by a call, comes back with its files and its mode;
// and one a call made read-only gets its files back and its mode too. A
// bot that is not root cannot create entries in a directory without write
// permission, so the restore must give a directory its recorded mode
// after its children, not before. As root (where permissions do not
// bind) the test re-runs itself as nobody.
func TestUndoRestoresReadOnlyDirectories(t *testing.T) {
	if os.Getuid() == 0 {
		testutil.RerunAsNobody(t, "TestUndoRestoresReadOnlyDirectories", nil)
		return
	}
	conv := core.Conversation{Gateway: "console", Chat: "local"}
	f := newFixture(t, nil)
	f.write("ro/a.txt", "alpha")
	f.write("ro/sub/b.txt", "beta")
	f.write("locked/c.txt", "gamma")
	ro, sub, locked := filepath.Join(f.ws, "ro"), filepath.Join(f.ws, "ro", "sub"), filepath.Join(f.ws, "locked")
	for _, d := range []string{sub, ro} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	before := tree(t, f.ws)

	f.call(conv, "shell", "")
	// The call deletes the read-only tree, and locks another directory
	// after emptying it.
	for _, d := range []string{ro, sub} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(ro); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(locked, "c.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0o555); err != nil {
		t.Fatal(err)
	}

	reply, _ := undo(f.m, conv, "console:local", false, 1)
	sameTree(t, "after /undo ("+reply+")", tree(t, f.ws), before)
	for d, want := range map[string]os.FileMode{ro: 0o555, sub: 0o555, locked: 0o755} {
		info, err := os.Stat(d)
		if err != nil {
			t.Fatalf("%s: %v (reply %q)", d, err, reply)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o after /undo, want %o", d, got, want)
		}
	}
	// Let t.TempDir's cleanup remove the tree.
	for _, d := range []string{sub, ro, locked} {
		_ = os.Chmod(d, 0o755)
	}
}
