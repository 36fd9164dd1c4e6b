package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// maxReadBytes caps what read_file reads of one file.
const maxReadBytes = 64 << 10

// readFile is the read_file tool.
type readFile struct{ ws *Workspace }

// NewReadFile returns the read_file tool: it reads a text file of the
// workspace, up to 64 KiB.
func NewReadFile(ws *Workspace) Tool { return readFile{ws: ws} }

// Spec describes read_file.
func (readFile) Spec() Spec {
	return Spec{
		Name:        "read_file",
		Description: "Read a workspace text file.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		ReadOnly:    true,
	}
}

// Run reads the file.
func (t readFile) Run(_ context.Context, args json.RawMessage) (string, error) {
	return t.ws.run(args, false, func(root *os.Root, path string, a pathArgs) (string, error) {
		// O_NONBLOCK: opening a FIFO must not wait for a writer.
		f, err := root.OpenFile(path, os.O_RDONLY|oNonBlock, 0)
		if err != nil {
			return "", pathErr(a.Path, err)
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return "", pathErr(a.Path, err)
		}
		if !info.Mode().IsRegular() {
			// A FIFO or device would block or never end.
			return "", fmt.Errorf("%q is not a regular file (%s)", a.Path, info.Mode().Type())
		}
		data, err := io.ReadAll(io.LimitReader(f, maxReadBytes))
		if err != nil {
			return "", pathErr(a.Path, err)
		}
		return asText(data, info.Size()), nil
	})
}

// asText returns data as text, with a note when the file is longer than
// what was read, or only a note when the file is binary.
func asText(data []byte, size int64) string {
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data[:completeRunes(data)]) {
		return fmt.Sprintf("[binary file, %d bytes]", size)
	}
	if int64(len(data)) < size {
		keep := completeRunes(data)
		return string(data[:keep]) + fmt.Sprintf("\n…[truncated: showing %d of %d bytes]", keep, size)
	}
	return string(data)
}
