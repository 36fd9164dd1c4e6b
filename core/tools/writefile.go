package tools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFile is the write_file tool.
type writeFile struct {
	ws *Workspace
	// fault, when set (tests only), is called at each step of a write with
	// the workspace root and the target's path: tests inject faults there
	// (a change under the tool) and look at the state between steps.
	fault func(step writeStep, root *os.Root, path, tmp string)
}

// writeStep names a point in write_file's work where a test may look in.
type writeStep int

const (
	// stepSynced: the content is in the synced temporary file; the target
	// is untouched (a crash here leaves the old file whole).
	stepSynced writeStep = iota + 1
	// stepRenamed: the temporary file has replaced the target, which is
	// about to be read back.
	stepRenamed
)

// NewWriteFile returns the write_file tool: it creates or replaces a file
// of the workspace (a new file gets mode 0644, a replaced one keeps its
// mode), creating its parent directories. The content goes to a temporary
// file in the same directory, is synced and renamed over the target, so a
// crash leaves the old file or the new one, never half of one; the file is
// then read back and its SHA-256 compared with what was written. Only a
// regular file or an absent one is replaced: a FIFO, a device, a socket or
// a symbolic link is refused at once, never waited on.
func NewWriteFile(ws *Workspace) Tool { return writeFile{ws: ws} }

// Spec describes write_file.
func (writeFile) Spec() Spec {
	return Spec{
		Name:        "write_file",
		Description: "Create or overwrite a workspace file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},` +
			`"content":{"type":"string"}},"required":["path","content"]}`),
	}
}

// Run writes the file and reads it back.
func (t writeFile) Run(_ context.Context, args json.RawMessage) (string, error) {
	return t.ws.run(args, true, func(root *os.Root, path string, a pathArgs) (string, error) {
		if dir := filepath.Dir(path); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return "", pathErr(a.Path, err)
			}
		}
		if err := writeAtomic(root, path, a.Content, t.fault); err != nil {
			return "", pathErr(a.Path, err)
		}
		want := sha256.Sum256([]byte(a.Content))
		got, err := fileDigest(root, path)
		if err != nil {
			return "", fmt.Errorf("write_file: %s: wrote %d bytes but could not read them back: %w",
				path, len(a.Content), pathErr(a.Path, err))
		}
		if got != want {
			return "", fmt.Errorf("write_file: %s: verification failed: wrote sha256:%s, read back sha256:%s",
				path, hex.EncodeToString(want[:]), hex.EncodeToString(got[:]))
		}
		return fmt.Sprintf("wrote %d bytes to %s, verified", len(a.Content), path), nil
	})
}

// writeAtomic replaces path, which must be a regular file or absent, with
// content: written to a temporary file beside it, synced, given the old
// file's mode, renamed over path, and the directory synced so the rename
// survives a crash. The temporary file is removed on any failure.
// fault, when not nil, is called at each step (tests).
func writeAtomic(root *os.Root, path, content string, fault func(writeStep, *os.Root, string, string)) error {
	if fault == nil {
		fault = func(writeStep, *os.Root, string, string) {}
	}
	mode := fs.FileMode(0o644)
	modeSet := false
	// os.Root resolves symbolic links itself: refuse a final link here.
	// Whatever is swapped in after this check is replaced by the rename,
	// never written through.
	if info, err := root.Lstat(path); err == nil {
		if !info.Mode().IsRegular() {
			if _, err := root.Stat(path); escapes(err) {
				return err // a link out of the workspace says so
			}
			return &os.PathError{Op: "write", Path: path, Err: fmt.Errorf("%w (%s)", errNotRegular, info.Mode().Type())}
		}
		mode, modeSet = info.Mode().Perm(), true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, f, err := createTemp(root, path, mode)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err := f.WriteString(content); err != nil {
		return err
	}
	if modeSet {
		// The umask shaped the temporary file's mode; a replaced file keeps
		// its own exactly.
		if err := f.Chmod(mode); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fault(stepSynced, root, path, tmp)
	if err := root.Rename(tmp, path); err != nil {
		return err
	}
	done = true
	if err := syncDir(root, filepath.Dir(path)); err != nil {
		return err
	}
	fault(stepRenamed, root, path, tmp)
	return nil
}

// nameMax is the longest file name most file systems take (NAME_MAX).
const nameMax = 255

// createTemp creates a new, empty temporary file in path's directory,
// named after it, with mode (before the umask). A long name is cut, on a
// character boundary, so that the temporary name fits in nameMax bytes
// whenever path's own name does.
func createTemp(root *os.Root, path string, mode fs.FileMode) (string, *os.File, error) {
	dir, base := filepath.Split(path)
	if room := nameMax - len(".") - len(".tmp-") - 12; len(base) > room {
		base = base[:runeStart(base, room)]
	}
	for range 10 {
		var r [6]byte
		rand.Read(r[:])
		tmp := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:]))
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return tmp, f, err
	}
	return "", nil, &os.PathError{Op: "write", Path: path, Err: errors.New("no free temporary file name")}
}

// syncDir fsyncs the directory dir of the root, making a rename in it
// durable.
func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}

// fileDigest returns the SHA-256 of the regular file at path. The open
// never blocks on a FIFO swapped in meanwhile, and anything but a regular
// file is an error.
func fileDigest(root *os.Root, path string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := root.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return sum, err
	}
	if !info.Mode().IsRegular() {
		return sum, &os.PathError{Op: "verify", Path: path, Err: fmt.Errorf("%w (%s)", errNotRegular, info.Mode().Type())}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// errNotRegular is write_file's refusal of anything but a regular file.
var errNotRegular = errors.New("not a regular file")
