package checkpoint

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestTransient(t *testing.T) {
	for name, want := range map[string]bool{
		".notes.txt.tmp-0123456789ab":  true, // write_file's temporary file
		".gatehouse-undo-abcdef012345": true, // a restore's
		".x.tmp-0123456789a":           false,
		".x.tmp-0123456789ABC":         false,
		".x.tmp-0123456789abc":         false,
		"notes.txt.tmp-0123456789ab":   false, // not hidden: not ours
		".tmp-0123456789ab":            false,
		".gatehouse-undo-":             false,
		"notes.txt":                    false,
	} {
		if got := transient(name); got != want {
			t.Errorf("transient(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestTemporaryFilesAreNotRecorded: the temporary file of a write in
// progress (another conversation's call runs beside this checkpoint) or
// left by a crash is no state to record; a restore, which runs while no
// call does, removes it.
func TestTemporaryFilesAreNotRecorded(t *testing.T) {
	f := newFixture(t, nil)
	f.write("notes.txt", "v1")
	f.write("d/.notes.txt.tmp-0123456789ab", "half a fi")
	f.write(".gatehouse-undo-abcdef012345", "left by a crash")
	f.write(".x.tmp-notours", "a user's own file")
	f.call(convA, "write_file", "")
	last, err := f.db.LatestCheckpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range last.Files {
		paths = append(paths, e.Path)
	}
	if want := []string{".x.tmp-notours", "d", "notes.txt"}; !slices.Equal(paths, want) {
		t.Errorf("recorded %q, want %q", paths, want)
	}
	f.write("notes.txt", "v2")
	reply, _ := undo(f.m, convA, "console:local", true, 1)
	for _, p := range []string{"notes.txt", "d/.notes.txt.tmp-0123456789ab (removed)", ".gatehouse-undo-abcdef012345 (removed)"} {
		if !strings.Contains(reply, p) {
			t.Errorf("reply %q does not list %q", reply, p)
		}
	}
	got := tree(t, f.ws)
	if got["notes.txt"] != "v1" || got[".x.tmp-notours"] != "a user's own file" || len(got) != 3 {
		t.Errorf("after /undo: %q", got)
	}
}
