package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// runWrite runs tool with a write_file call of path and content.
func runWrite(t *testing.T, tool Tool, path, content string) (string, error) {
	t.Helper()
	raw, err := json.Marshal(pathArgs{Path: path, Content: content})
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), raw)
}

// noTempFiles fails when a write left a temporary file in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
}

// TestWriteFileVerified: a write reports "verified" with its byte count,
// creates parent directories, leaves no temporary file, and a replaced
// file keeps its mode.
func TestWriteFileVerified(t *testing.T) {
	ws, _ := testWorkspace(t)
	dir := ws.Dir()
	out, err := runWrite(t, NewWriteFile(ws), "sub/a.txt", "héllo")
	if err != nil || out != "wrote 6 bytes to sub/a.txt, verified" {
		t.Fatalf("write_file sub/a.txt = %q, %v; want %q", out, err, "wrote 6 bytes to sub/a.txt, verified")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub/a.txt")); string(b) != "héllo" {
		t.Errorf("sub/a.txt = %q", b)
	}
	for _, mode := range []os.FileMode{0o600, 0o755} {
		p := filepath.Join(dir, "script-"+mode.String())
		if err := os.WriteFile(p, []byte("old content, longer than the new"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		if _, err := runWrite(t, NewWriteFile(ws), filepath.Base(p), "new"); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != mode {
			t.Errorf("%s: mode %v after the write, want %v kept", filepath.Base(p), info.Mode().Perm(), mode)
		}
		if b, _ := os.ReadFile(p); string(b) != "new" {
			t.Errorf("%s = %q, want %q", filepath.Base(p), b, "new")
		}
	}
	noTempFiles(t, dir)
	noTempFiles(t, filepath.Join(dir, "sub"))
}

// TestWriteFileVerificationFailure: the file changed between the write and
// the read-back (a fault injected through the tool's hook) is reported as
// an error naming both digests, not as a success.
func TestWriteFileVerificationFailure(t *testing.T) {
	ws, _ := testWorkspace(t)
	tool := writeFile{ws: ws, fault: func(step writeStep, root *os.Root, path, _ string) {
		if step != stepRenamed {
			return
		}
		f, err := root.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteString("tampered")
		f.Close()
	}}
	out, err := runWrite(t, tool, "a.txt", "intended")
	if err == nil {
		t.Fatalf("write_file = %q, nil; want a verification failure", out)
	}
	want := sha256.Sum256([]byte("intended"))
	got := sha256.Sum256([]byte("tampered"))
	for _, s := range []string{"verification failed", "sha256:" + hex.EncodeToString(want[:]), "sha256:" + hex.EncodeToString(got[:])} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

// TestWriteFileNeverHalfWritten: until the rename, the target holds its old
// content whole and the new content sits complete in a synced temporary
// file beside it — a crash at any point leaves one or the other. A failed
// write (the target turned into a directory meanwhile) leaves the
// temporary file removed.
func TestWriteFileNeverHalfWritten(t *testing.T) {
	ws, _ := testWorkspace(t)
	dir := ws.Dir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen bool
	tool := writeFile{ws: ws, fault: func(step writeStep, _ *os.Root, path, tmp string) {
		if step != stepSynced {
			return
		}
		seen = true
		if b, _ := os.ReadFile(filepath.Join(dir, path)); string(b) != "old" {
			t.Errorf("before the rename the target holds %q, want the old content", b)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, tmp)); string(b) != "new content" {
			t.Errorf("before the rename the temporary file holds %q, want the new content", b)
		}
	}}
	if _, err := runWrite(t, tool, "a.txt", "new content"); err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Fatal("the synced step was never reached")
	}

	blocked := writeFile{ws: ws, fault: func(step writeStep, _ *os.Root, path, _ string) {
		if step == stepSynced {
			os.Remove(filepath.Join(dir, path))
			os.Mkdir(filepath.Join(dir, path), 0o755)
			os.WriteFile(filepath.Join(dir, path, "x"), nil, 0o644) // a non-empty directory: the rename fails
		}
	}}
	if out, err := runWrite(t, blocked, "b.txt", "never"); err == nil {
		t.Fatalf("write over a directory = %q, nil; want an error", out)
	}
	noTempFiles(t, dir)
}

// TestWriteFileLongName: a file name as long as the file system allows
// (255 bytes) is written like any other, multi-byte characters included;
// the temporary file beside it is named after a prefix of it. The
// temporary name used to take the whole name plus 18 bytes and failed with
// "file name too long" for names of 238 bytes and more.
func TestWriteFileLongName(t *testing.T) {
	ws, _ := testWorkspace(t)
	dir := ws.Dir()
	for _, name := range []string{strings.Repeat("a", 255), strings.Repeat("é", 127) + "x", strings.Repeat("b", 238)} {
		var tmpName string
		tool := writeFile{ws: ws, fault: func(step writeStep, _ *os.Root, _, tmp string) {
			if step == stepSynced {
				tmpName = tmp
			}
		}}
		out, err := runWrite(t, tool, "sub/"+name, "long")
		if err != nil {
			t.Fatalf("write_file of a %d-byte name: %q, %v", len(name), out, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "sub", name)); string(b) != "long" {
			t.Errorf("%d-byte name: file holds %q, want %q", len(name), b, "long")
		}
		if base := filepath.Base(tmpName); !utf8.ValidString(base) || !strings.HasPrefix(base, "."+name[:2]) {
			t.Errorf("%d-byte name: temporary file %q, want a valid name starting with %q", len(name), base, "."+name[:2])
		}
	}
	noTempFiles(t, filepath.Join(dir, "sub"))
}
