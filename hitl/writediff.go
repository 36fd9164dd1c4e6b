package hitl

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// writeTool is the built-in tool whose held calls are shown as a diff.
const writeTool = "write_file"

// maxDiffFileBytes bounds the file read to be diffed; a larger one is
// hashed, not diffed ("diff too large").
const maxDiffFileBytes = 1 << 20

// writePreview is what a held write_file call will do to its file, as the
// request and /show show it: a diff against the file as it is now.
type writePreview struct {
	Path    string // as the call names it
	Content string // the new content
	New     bool   // no file there yet
	OldSum  string // hex SHA-256 of the file as it is; "" for a new file
	Diff    lineDiff
	Diffed  bool // false: too large to diff (the whole new content is attached)
}

// previewWrite returns the preview of a write_file call against the file
// in workspace as it is now. ok is false when call is not such a call, or
// its file cannot be looked at (outside the workspace, not a regular
// file, unreadable): the request then shows the arguments as for any
// tool, and write_file itself refuses what it cannot write.
func previewWrite(workspace string, call llm.ToolCall) (p writePreview, ok bool) {
	if call.Name != writeTool || workspace == "" {
		return p, false
	}
	var args struct {
		Path    *string `json:"path"`
		Content *string `json:"content"`
	}
	if json.Unmarshal([]byte(call.Args), &args) != nil || args.Path == nil || args.Content == nil {
		return p, false
	}
	p.Path, p.Content = *args.Path, *args.Content
	clean := filepath.Clean(p.Path)
	if !filepath.IsLocal(clean) {
		return p, false
	}
	old, sum, err := readBounded(workspace, clean)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.New, p.Diffed = true, true // shown whole, not as a diff
		return p, true
	case err != nil:
		return p, false
	}
	p.OldSum = sum
	if old == nil { // over maxDiffFileBytes
		return p, true
	}
	p.Diff, p.Diffed = unifiedDiff(string(old), p.Content)
	return p, true
}

// readBounded reads the regular file path of the workspace: its content
// (nil when over maxDiffFileBytes) and its hex SHA-256. It never follows a
// symbolic link out of the workspace nor waits on a FIFO.
func readBounded(workspace, path string) ([]byte, string, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	f, err := root.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, "", fs.ErrNotExist
	}
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !fi.Mode().IsRegular() {
		return nil, "", fmt.Errorf("%s: not a regular file", path)
	}
	h := sha256.New()
	data, err := io.ReadAll(io.TeeReader(io.LimitReader(f, maxDiffFileBytes+1), h))
	if err != nil {
		return nil, "", err
	}
	if len(data) > maxDiffFileBytes {
		data = nil
		if _, err := io.Copy(h, f); err != nil {
			return nil, "", err
		}
	}
	return data, hex.EncodeToString(h.Sum(nil)), nil
}

// shortSum is the short form of a hex SHA-256 people compare by eye.
func shortSum(sum string) string {
	return "sha256:" + sum[:min(12, len(sum))]
}

// headline is the preview's one-line summary: the path, what changes, and
// the file's current SHA-256.
func (p writePreview) headline() string {
	path := codeSpan(textutil.Graphic(p.Path))
	switch {
	case p.New:
		return fmt.Sprintf("%s: new file, %d lines", path, len(splitLines(p.Content)))
	case !p.Diffed:
		return fmt.Sprintf("%s: diff too large; the whole new content is attached (%d lines; now %s)",
			path, len(splitLines(p.Content)), shortSum(p.OldSum))
	}
	return fmt.Sprintf("%s: +%d −%d lines (now %s)", path, p.Diff.Added, p.Diff.Deleted, shortSum(p.OldSum))
}

// body is what the preview shows under its headline, whole: the new
// content of a new file, else the diff's hunks ("" when too large).
func (p writePreview) body() string {
	if p.New {
		return p.Content
	}
	return p.Diff.Hunks
}

// file is the preview as an attachment, whole: the unified diff with its
// "---"/"+++" lines (name.diff), or the new content when there is no diff
// to show (name.txt). Runes a chat app or viewer would hide are escaped,
// tabs kept.
func (p writePreview) file(token string) (name, text string) {
	if p.New || !p.Diffed {
		return token + ".txt", graphicKeepTabs(p.Content)
	}
	path := filepath.ToSlash(filepath.Clean(p.Path))
	return token + ".diff", graphicKeepTabs(fmt.Sprintf("--- a/%s\n+++ b/%s\n%s", path, path, p.Diff.Hunks))
}

// graphicKeepTabs is textutil.Graphic that leaves tabs as they are: for a
// file read in an editor, where a tab shows as space and a "\t" would
// make code unreadable.
func graphicKeepTabs(s string) string {
	parts := strings.Split(s, "\t")
	for i, part := range parts {
		parts[i] = textutil.Graphic(part)
	}
	return strings.Join(parts, "\t")
}

// boundDigest is the digest an approval of call is stored with:
// Digest(call) and, for a write_file call whose file can be looked at,
// the state of that file as the request's diff is made against ("absent"
// or "sha256:<hex>"), after a space. What is approved is then the call and
// the file contents shown: a diff shown against content that has changed
// since no longer matches, and is refused at run time.
func boundDigest(h heldCall) string {
	d := Digest(h.a.Call)
	if !h.diffed {
		return d
	}
	return d + " " + h.preview.state()
}

// state is the file's state the preview was made against.
func (p writePreview) state() string {
	if p.New {
		return boundAbsent
	}
	return "sha256:" + p.OldSum
}

// callDigest is the part of a stored digest that binds the call alone.
func callDigest(stored string) string {
	d, _, _ := strings.Cut(stored, " ")
	return d
}

// digestHolds reports whether a stored approval still matches what it
// showed: its call (Digest) and, when bound, its file's state now. file is
// true when only the file no longer matches.
func (b *Broker) digestHolds(a record.Approval) (ok, file bool) {
	d, state, bound := strings.Cut(a.Digest, " ")
	if d != Digest(a.Call) {
		return false, false
	}
	if !bound {
		return true, false
	}
	h := b.view(a)
	if !h.diffed || h.preview.state() != state {
		return false, true
	}
	return true, false
}
