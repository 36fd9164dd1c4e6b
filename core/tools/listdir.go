package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// maxListEntries caps how many entries list_dir shows.
const maxListEntries = 500

// listDir is the list_dir tool.
type listDir struct{ ws *Workspace }

// NewListDir returns the list_dir tool: it lists a workspace directory,
// directories with a trailing "/", files with their size.
func NewListDir(ws *Workspace) Tool { return listDir{ws: ws} }

// Spec describes list_dir.
func (listDir) Spec() Spec {
	return Spec{
		Name:        "list_dir",
		Description: "List a workspace directory.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		ReadOnly:    true,
	}
}

// Run lists the directory, sorted by name.
func (t listDir) Run(_ context.Context, args json.RawMessage) (string, error) {
	return t.ws.run(args, false, func(root *os.Root, path string, a pathArgs) (string, error) {
		// O_DIRECTORY: a FIFO is refused, never opened and waited on.
		d, err := root.OpenFile(path, os.O_RDONLY|oDirectory, 0)
		if err != nil {
			return "", pathErr(a.Path, err)
		}
		defer d.Close()
		entries, err := d.ReadDir(-1)
		if err != nil {
			return "", pathErr(a.Path, err)
		}
		slices.SortFunc(entries, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
		if len(entries) == 0 {
			return "(empty)", nil
		}
		var b strings.Builder
		for i, e := range entries {
			if i == maxListEntries {
				fmt.Fprintf(&b, "…[%d more]\n", len(entries)-i)
				break
			}
			writeEntry(&b, e)
		}
		return strings.TrimSuffix(b.String(), "\n"), nil
	})
}

// writeEntry writes one line: "dir/", "link@" or "file 123".
func writeEntry(b *strings.Builder, e fs.DirEntry) {
	switch {
	case e.IsDir():
		b.WriteString(e.Name() + "/\n")
	case e.Type()&fs.ModeSymlink != 0:
		b.WriteString(e.Name() + "@\n")
	default:
		size := int64(-1)
		if info, err := e.Info(); err == nil {
			size = info.Size()
		}
		fmt.Fprintf(b, "%s %d\n", e.Name(), size)
	}
}
