package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// writeFile is the write_file tool.
type writeFile struct{ ws *Workspace }

// NewWriteFile returns the write_file tool: it creates or replaces a file
// of the workspace (mode 0644), creating its parent directories. Only a
// regular file or an absent one is written: a FIFO, a device, a socket or a
// symbolic link is refused at once, never waited on.
func NewWriteFile(ws *Workspace) Tool { return writeFile{ws: ws} }

// Spec describes write_file.
func (writeFile) Spec() Spec {
	return Spec{
		Name:        "write_file",
		Description: "Create or overwrite a file in the workspace.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},` +
			`"content":{"type":"string"}},"required":["path","content"]}`),
	}
}

// Run writes the file.
func (t writeFile) Run(_ context.Context, args json.RawMessage) (string, error) {
	return t.ws.run(args, true, func(root *os.Root, path string, a pathArgs) (string, error) {
		if dir := filepath.Dir(path); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return "", pathErr(a.Path, err)
			}
		}
		if err := writeRegular(root, path, a.Content); err != nil {
			return "", pathErr(a.Path, err)
		}
		return fmt.Sprintf("wrote %d bytes to %s", len(a.Content), path), nil
	})
}

// writeRegular writes content to path, which must be a regular file or
// absent. The open never blocks (O_NONBLOCK: a FIFO without a reader fails
// with ENXIO instead of waiting for one) and the file is truncated only
// once fstat says it is regular.
func writeRegular(root *os.Root, path, content string) error {
	// os.Root resolves symbolic links itself, O_NOFOLLOW or not: refuse a
	// final link here. A link swapped in after this check can only lead to
	// a file of the workspace, which the fstat below still checks.
	if info, err := root.Lstat(path); err == nil && !info.Mode().IsRegular() {
		if _, err := root.Stat(path); escapes(err) {
			return err // a link out of the workspace says so
		}
		return &os.PathError{Op: "write", Path: path, Err: fmt.Errorf("%w (%s)", errNotRegular, info.Mode().Type())}
	}
	f, err := root.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	switch {
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ELOOP):
		return &os.PathError{Op: "write", Path: path, Err: errNotRegular}
	case err != nil:
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return &os.PathError{Op: "write", Path: path, Err: fmt.Errorf("%w (%s)", errNotRegular, info.Mode().Type())}
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		return err
	}
	return f.Close()
}

// errNotRegular is write_file's refusal of anything but a regular file.
var errNotRegular = errors.New("not a regular file")
