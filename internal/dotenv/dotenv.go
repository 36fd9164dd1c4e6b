// Package dotenv reads and writes the .env file that `bot init` writes
// beside the configuration: NAME=value lines holding the secrets the
// configuration names as ${NAME}. The bot reads it when it loads the
// configuration; the process environment wins over it.
package dotenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Name is the file's name, beside the configuration file.
const Name = ".env"

// maxSize bounds the file read: it holds a few tokens.
const maxSize = 1 << 20

// Entry is one NAME=value line.
type Entry struct {
	Name, Value string
}

// PathFor returns the .env path beside the configuration file config.
func PathFor(config string) string { return filepath.Join(filepath.Dir(config), Name) }

// Read reads the .env file at path. A file that does not exist is no
// error: it yields no entries. Errors name the file and the line, never a
// value.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxSize+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if buf.Len() > maxSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxSize)
	}
	return Parse(path, buf.Bytes())
}

// Parse decodes .env content: NAME=value lines, optionally "export NAME=value",
// the value optionally in single or double quotes (taken literally, no
// escapes); blank lines and lines starting with # are skipped.
func Parse(path string, data []byte) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxSize)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || !ValidName(name) {
			return nil, fmt.Errorf("%s:%d: want NAME=value", path, n)
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		out = append(out, Entry{Name: name, Value: value})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// ValidName reports whether name is an environment variable name:
// letters, digits and underscores, not starting with a digit.
func ValidName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Lookup returns a lookup for ${VAR} expansion: the process environment
// (env, os.LookupEnv when nil) first, then entries.
func Lookup(env func(string) (string, bool), entries []Entry) func(string) (string, bool) {
	if env == nil {
		env = os.LookupEnv
	}
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		m[e.Name] = e.Value
	}
	return func(name string) (string, bool) {
		if v, ok := env(name); ok {
			return v, true
		}
		v, ok := m[name]
		return v, ok
	}
}

// Environ returns entries as NAME=value strings.
func Environ(entries []Entry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name+"="+e.Value)
	}
	return out
}

// Format renders entries as a .env file under a comment header. A value
// of safe characters only is written bare; any other is single-quoted
// (a value holding a quote, a line break or a control character is an
// error: no token has one).
func Format(header string, entries []Entry) ([]byte, error) {
	var b bytes.Buffer
	for line := range strings.SplitSeq(strings.TrimRight(header, "\n"), "\n") {
		b.WriteString("# " + line + "\n")
	}
	for _, e := range entries {
		if !ValidName(e.Name) {
			return nil, fmt.Errorf("dotenv: bad variable name %q", e.Name)
		}
		if strings.ContainsFunc(e.Value, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\'' }) {
			return nil, fmt.Errorf("dotenv: the value of %s holds a quote or a control character", e.Name)
		}
		v := e.Value
		if strings.ContainsFunc(v, func(r rune) bool { return !safe(r) }) {
			v = "'" + v + "'"
		}
		b.WriteString(e.Name + "=" + v + "\n")
	}
	return b.Bytes(), nil
}

func safe(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:/@+,%", r)
}

// WriteFile writes data to path with mode perm through a temporary file in
// the same directory and a rename, so that a reader never sees a part of
// it and the content is never readable beyond perm, not even for a moment.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) //nolint:errcheck // gone after the rename
	// CreateTemp makes it 0600; Chmod sets perm exactly, whatever the umask.
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
