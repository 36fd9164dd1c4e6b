package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrOutsideWorkspace is returned for a path that is absolute, climbs out
// with "..", or leads out through a symbolic link.
var ErrOutsideWorkspace = errors.New("path is outside the workspace")

// Workspace is the directory the file tools and the shell work in. Every
// path is relative to it and confined to it: the lexical check refuses
// absolute paths and ".." escapes with a clear message, and os.Root refuses
// symbolic links that lead outside, at the time of each access.
type Workspace struct {
	dir string // absolute, symlinks resolved
}

// NewWorkspace returns the workspace at dir, creating it (0700: the
// bot's user's only) if missing; an existing one keeps its mode.
func NewWorkspace(dir string) (*Workspace, error) {
	if dir == "" {
		return nil, errors.New("tools: workspace: empty directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tools: workspace: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("tools: workspace: %w", err)
	}
	return &Workspace{dir: real}, nil
}

// Dir returns the workspace's absolute directory.
func (w *Workspace) Dir() string { return w.dir }

// open opens the workspace root and checks path lexically. The caller
// closes the root. A Root per call (one open(2)) keeps following the
// directory if it is replaced while the bot runs.
func (w *Workspace) open(path string) (*os.Root, string, error) {
	if path == "" {
		path = "."
	}
	clean := filepath.Clean(path)
	if !filepath.IsLocal(clean) && clean != "." {
		return nil, "", fmt.Errorf("%q: %w (use a relative path without \"..\")", path, ErrOutsideWorkspace)
	}
	root, err := os.OpenRoot(w.dir)
	if err != nil {
		return nil, "", fmt.Errorf("workspace: %w", err)
	}
	return root, clean, nil
}

// pathErr rewrites os.Root's escape error as ErrOutsideWorkspace and strips
// the workspace's absolute directory from other errors.
func pathErr(path string, err error) error {
	if escapes(err) {
		return fmt.Errorf("%q: %w (through a symbolic link)", path, ErrOutsideWorkspace)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %q: %w", pe.Op, path, pe.Err)
	}
	return err
}

// escapes reports whether err is os.Root's "path escapes from parent",
// which the os package does not export.
func escapes(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// pathArgs is the arguments object of the file tools.
type pathArgs struct {
	Path    string `json:"path"`
	Content string `json:"content,omitempty"` // omitted for read_file and list_dir
}

// run decodes a file tool's arguments strictly (content only when
// withContent), opens the workspace root for the requested path and calls f
// with it; the root is closed afterwards.
func (w *Workspace) run(args json.RawMessage, withContent bool, f func(root *os.Root, path string, a pathArgs) (string, error)) (string, error) {
	var a pathArgs
	if withContent {
		if err := decodeArgs(args, &a); err != nil {
			return "", err
		}
	} else {
		var p struct {
			Path string `json:"path"`
		}
		if err := decodeArgs(args, &p); err != nil {
			return "", err
		}
		a.Path = p.Path
	}
	root, path, err := w.open(a.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	return f(root, path, a)
}
