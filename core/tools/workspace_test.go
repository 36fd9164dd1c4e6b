package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// testWorkspace returns a workspace under a fresh temp dir, next to an
// "outside" directory holding secret.txt, with two escaping symlinks:
// link.txt → outside/secret.txt and linkdir → outside.
func testWorkspace(t *testing.T) (*Workspace, string) {
	t.Helper()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("top secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(filepath.Join(base, "ws", "nested")) // created if missing
	if err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"link.txt":     filepath.Join(outside, "secret.txt"),
		"rel-link.txt": "../../outside/secret.txt",
		"linkdir":      outside,
		"dangling":     filepath.Join(outside, "new.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(ws.Dir(), link)); err != nil {
			t.Fatal(err)
		}
	}
	return ws, outside
}

func runTool(t *testing.T, tool Tool, args any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), raw)
}

func TestWorkspaceRefusesEscapes(t *testing.T) {
	ws, outside := testWorkspace(t)
	paths := []string{"..", "../x", "../../etc/passwd", "a/../../x", "/etc/passwd", "/" + ws.Dir() + "/a",
		"link.txt", "rel-link.txt", "linkdir/secret.txt", "dangling"}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			for _, tt := range []struct {
				tool Tool
				args pathArgs
			}{{NewReadFile(ws), pathArgs{Path: p}}, {NewWriteFile(ws), pathArgs{Path: p, Content: "pwned"}}} {
				tool := tt.tool
				out, err := runTool(t, tool, tt.args)
				if !errors.Is(err, ErrOutsideWorkspace) {
					t.Errorf("%s: got %q, %v; want ErrOutsideWorkspace", tool.Spec().Name, out, err)
				}
			}
		})
	}
	if out, err := runTool(t, NewListDir(ws), pathArgs{Path: "linkdir"}); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("list_dir linkdir: %q, %v", out, err)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(data) != "top secret" {
		t.Errorf("outside file changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("write through a dangling link created a file outside: %v", err)
	}
}

func TestWorkspaceErrorsHideTheDirectory(t *testing.T) {
	ws, _ := testWorkspace(t)
	_, err := runTool(t, NewReadFile(ws), pathArgs{Path: "missing.txt"})
	if err == nil || strings.Contains(err.Error(), ws.Dir()) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v", err)
	}
}

func TestWriteReadList(t *testing.T) {
	ws, _ := testWorkspace(t)
	if _, err := runTool(t, NewWriteFile(ws), pathArgs{Path: "sub/dir/a.txt", Content: "héllo"}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(ws.Dir(), "sub/dir/a.txt"))
	if err != nil || info.Mode().Perm() != 0o644&^umask() {
		t.Fatalf("written file: %v, %v", info, err)
	}
	if err := os.Symlink("sub/dir/a.txt", filepath.Join(ws.Dir(), "inside")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"sub/dir/a.txt", "./sub/../sub/dir/a.txt", "inside"} {
		if out, err := runTool(t, NewReadFile(ws), pathArgs{Path: p}); err != nil || out != "héllo" {
			t.Errorf("read %s: %q, %v", p, out, err)
		}
	}
	out, err := runTool(t, NewListDir(ws), struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	want := "dangling@\ninside@\nlink.txt@\nlinkdir@\nrel-link.txt@\nsub/"
	if out != want {
		t.Errorf("list_dir . = %q, want %q", out, want)
	}
	if out, err := runTool(t, NewListDir(ws), pathArgs{Path: "sub/dir"}); err != nil || out != "a.txt 6" {
		t.Errorf("list_dir sub/dir = %q, %v", out, err)
	}
}

func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}

func TestReadFileKinds(t *testing.T) {
	ws, _ := testWorkspace(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(ws.Dir(), "bin"), []byte{0x7f, 'E', 'L', 'F', 0, 1}, 0o644))
	must(os.WriteFile(filepath.Join(ws.Dir(), "big"), []byte(strings.Repeat("x", maxReadBytes+10)), 0o644))
	must(syscall.Mkfifo(filepath.Join(ws.Dir(), "fifo"), 0o644))
	tests := []struct{ path, want string }{
		{"bin", "[binary file, 6 bytes]"},
		{"big", "…[truncated: showing 65536 of 65546 bytes]"},
		{"fifo", "not a regular file"},
		{"sub-missing", "no such file"},
	}
	for _, tt := range tests {
		out, err := runTool(t, NewReadFile(ws), pathArgs{Path: tt.path})
		if err != nil {
			out = err.Error()
		}
		if !strings.Contains(out, tt.want) {
			t.Errorf("read %s: %.200q, want it to contain %q", tt.path, out, tt.want)
		}
	}
}

// TestWriteFileRefusesNonRegular: write_file to a FIFO (with or without a
// reader) or through a symbolic link returns an error at once instead of
// blocking; a regular file is replaced, shorter content included.
func TestWriteFileRefusesNonRegular(t *testing.T) {
	ws, _ := testWorkspace(t)
	dir := ws.Dir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "read-fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := os.OpenFile(filepath.Join(dir, "read-fifo"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := os.WriteFile(filepath.Join(dir, "real.txt"), []byte("a long first content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.txt", filepath.Join(dir, "inner-link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"fifo", "read-fifo", "inner-link"} {
		done := make(chan error, 1)
		go func() {
			_, err := runTool(t, NewWriteFile(ws), pathArgs{Path: p, Content: "x"})
			done <- err
		}()
		var err error
		testutil.WaitFor(t, "write_file "+p+" to return", func() bool {
			select {
			case err = <-done:
				return true
			default:
				return false
			}
		})
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("write_file %s: %v, want a not-a-regular-file error", p, err)
		}
	}
	if out, err := runTool(t, NewWriteFile(ws), pathArgs{Path: "real.txt", Content: "short"}); err != nil {
		t.Fatalf("write_file real.txt: %q, %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "real.txt")); string(b) != "short" {
		t.Errorf("real.txt = %q, want %q", b, "short")
	}
}

// TestListDirRefusesFIFO: list_dir of a FIFO returns "not a directory" at
// once; it used to open it for reading and wait for a writer forever,
// past the tool's timeout.
func TestListDirRefusesFIFO(t *testing.T) {
	ws, _ := testWorkspace(t)
	fifo := filepath.Join(ws.Dir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Should list_dir be stuck in open(2), a writer frees it.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := runTool(t, NewListDir(ws), pathArgs{Path: "fifo"})
		done <- err
	}()
	var err error
	testutil.WaitFor(t, "list_dir fifo to return", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("list_dir fifo: %v, want a not-a-directory error", err)
	}
}
