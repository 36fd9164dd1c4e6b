package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// writeFile is the write_file tool.
type writeFile struct{ ws *Workspace }

// NewWriteFile returns the write_file tool: it creates or replaces a file
// of the workspace (mode 0644), creating its parent directories.
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
		if err := root.WriteFile(path, []byte(a.Content), 0o644); err != nil {
			return "", pathErr(a.Path, err)
		}
		return fmt.Sprintf("wrote %d bytes to %s", len(a.Content), path), nil
	})
}
