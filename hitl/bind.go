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
	"slices"
	"strings"
	"syscall"
	"unicode"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// The values a standing allow binds a workspace path to (besides
// "sha256:<hex>" for a regular file's content).
const (
	boundAbsent = "absent" // nothing there
	boundDir    = "dir"    // a directory (its contents are not bound)
	boundOther  = "other"  // a FIFO, device or socket: never read
)

// maxWordBytes is the longest word taken for a path (PATH_MAX).
const maxWordBytes = 4096

// wordSeparators split words more finely than a shell does, so that
// "--file=run.sh", "a,b" and "${x}" yield their parts as well.
const wordSeparators = "=:,$`{}[]*?!#~@()<>|;&\"'\\"

// cwdForms are ways a command line names the working directory (the
// workspace for the shell tool); "$PWD/run.sh" names run.sh.
var cwdForms = strings.NewReplacer("${PWD}/", "./", "$PWD/", "./", "$(pwd)/", "./", "`pwd`/", "./")

// bindFiles maps every workspace path named by a word of call's
// arguments to its state: "sha256:<hex>" of a regular file's content,
// "absent", "dir" or "other". A word that leaves the workspace (an
// absolute path elsewhere, "..", a symlink pointing out) is not bound and
// never followed. With no workspace nothing is bound.
func bindFiles(workspace string, call llm.ToolCall) (map[string]string, error) {
	out := make(map[string]string)
	if workspace == "" {
		return out, nil
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("hitl: bind files: %w", err)
	}
	// An absolute path may name the workspace by the path it is
	// configured as or, when that goes through a symlink, by where it
	// leads: both are the workspace.
	roots := []string{ws}
	if real, err := filepath.EvalSymlinks(ws); err == nil && real != ws {
		roots = append(roots, real)
	}
	var paths []string
	for _, w := range argWords(call.Args) {
		for _, root := range roots {
			if p, ok := workspacePath(root, w); ok {
				paths = append(paths, p)
				break
			}
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	root, err := os.OpenRoot(ws)
	if errors.Is(err, fs.ErrNotExist) {
		for _, p := range paths {
			out[p] = boundAbsent
		}
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hitl: bind files: %w", err)
	}
	defer root.Close()
	for _, p := range paths {
		v, ok, err := fileState(root, p)
		if err != nil {
			return nil, fmt.Errorf("hitl: bind files: %s: %w", p, err)
		}
		if ok {
			out[p] = v
		}
	}
	return out, nil
}

// fileState returns the state of p inside root; ok is false when p leads
// out of the workspace (or cannot be looked at), so it is not bound.
func fileState(root *os.Root, p string) (state string, ok bool, err error) {
	// os.Root follows symlinks only while they stay inside the root.
	fi, err := root.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return boundAbsent, true, nil
	case err != nil:
		return "", false, nil
	case fi.IsDir():
		return boundDir, true, nil
	case !fi.Mode().IsRegular():
		return boundOther, true, nil
	}
	// O_NONBLOCK: if it became a FIFO since the Stat, opening must not hang.
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return boundAbsent, true, nil
	}
	if err != nil {
		return "", false, nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return boundOther, true, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false, fmt.Errorf("read: %w", err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), true, nil
}

// workspacePath returns the workspace-relative, slash-separated path that
// word names, when it names one inside ws (an absolute path at or under
// ws, or a relative path that does not climb out).
func workspacePath(ws, word string) (string, bool) {
	if word == "" || len(word) > maxWordBytes || strings.ContainsRune(word, 0) {
		return "", false
	}
	rel := word
	if filepath.IsAbs(word) {
		r, err := filepath.Rel(ws, filepath.Clean(word))
		if err != nil {
			return "", false
		}
		rel = r
	}
	rel = filepath.Clean(rel)
	if rel == "." || !filepath.IsLocal(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// argWords returns the candidate words of every string in the arguments
// JSON, keys included: shell-style words (quotes removed, backslash escapes applied, split
// at blanks and operators), and those words split further at punctuation.
// Taking too many words only binds more paths, which at worst holds a call
// again; taking too few could let a changed file run unapproved.
func argWords(args string) []string {
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		v = args // not JSON: take the text as it is
	}
	var out []string
	for _, s := range jsonStrings(v, nil) {
		s = cwdForms.Replace(s)
		for _, w := range shellWords(s) {
			out = append(out, w)
			out = append(out, strings.FieldsFunc(w, isSeparator)...)
		}
		out = append(out, strings.FieldsFunc(s, isSeparator)...)
	}
	return out
}

// jsonStrings appends every string in v: values and object keys (a tool,
// an MCP server's especially, may take a file by a key).
func jsonStrings(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = jsonStrings(e, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = jsonStrings(x[k], append(out, k))
		}
	}
	return out
}

// isSeparator reports whether r ends a word for the finer split.
func isSeparator(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune(wordSeparators, r)
}

// shellWords splits s roughly as a POSIX shell would: quotes group and are
// removed, a backslash escapes the next character (inside double quotes
// only $ ` " \ and the newline, as in sh), a backslash-newline is a line
// continuation and vanishes, blanks and the operators ;&|<>() end a word.
func shellWords(s string) []string {
	var (
		out   []string
		cur   strings.Builder
		quote rune
		esc   bool
	)
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case esc:
			esc = false
			switch {
			case r == '\n': // a line continuation: "ru\<newline>n.sh" is run.sh
			case quote == '"' && !strings.ContainsRune("$`\"\\", r):
				cur.WriteRune('\\') // "a\b" in double quotes is a\b
				cur.WriteRune(r)
			default:
				cur.WriteRune(r)
			}
		case r == '\\' && quote != '\'':
			esc = true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote = r
		case unicode.IsSpace(r) || strings.ContainsRune(";&|<>()`", r):
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

// changedFiles returns, sorted, the paths whose state differs between the
// bound and the current bindings (a path present in only one differs).
func changedFiles(bound, cur map[string]string) []string {
	var out []string
	for p, v := range cur {
		if old, ok := bound[p]; !ok || old != v {
			out = append(out, p)
		}
	}
	for p := range bound {
		if _, ok := cur[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
