package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// errSkip stops a folder's walk once it is refused.
var errSkip = errors.New("skill refused")

// Load reads every skill folder of dir, in name order. A folder that
// breaks the specification or our bounds is left out of skills and
// problems say why; problems also hold warnings about skills loaded. A
// dir that cannot be read is an error.
func Load(dir string) (skills []*Skill, problems []Problem, err error) {
	top, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("skills: %w", err)
	}
	defer top.Close()
	entries, err := fs.ReadDir(top.FS(), ".")
	if err != nil {
		return nil, nil, fmt.Errorf("skills: %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.Type().IsRegular() {
			continue // a README beside the skills, say
		}
		s, _, probs := loadFrom(top, dir, e.Name(), "")
		problems = append(problems, probs...)
		if s != nil {
			skills = append(skills, s)
		}
	}
	return skills, problems, nil
}

// LoadOne reads the skill folder name of dir, and returns it (nil when it
// is refused) with the problems found.
func LoadOne(dir, name string) (*Skill, []Problem) {
	s, _, probs := loadWant(dir, name, "")
	return s, probs
}

// loadWant reads the skill folder name of dir and returns, besides it,
// the content of its file want ("" for none) as read while digesting, so
// what is shown is what the digest covers (at most MaxFileShown+1 bytes).
func loadWant(dir, name, want string) (*Skill, []byte, []Problem) {
	top, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, []Problem{{Dir: dir, Skill: name, Rule: "skills folder: " + err.Error()}}
	}
	defer top.Close()
	return loadFrom(top, dir, name, want)
}

// walker is one folder's walk: its files, hashed, and what it kept.
type walker struct {
	root    *os.Root
	skill   *Skill
	total   int64
	md      []byte
	want    string
	wanted  []byte
	probs   []Problem
	refused bool
}

// loadFrom reads the folder name of top (the skills folder dir).
func loadFrom(top *os.Root, dir, name, want string) (*Skill, []byte, []Problem) {
	shown := textShown(name, MaxName+8)
	refuse := func(field, rule string) (*Skill, []byte, []Problem) {
		return nil, nil, []Problem{{Dir: dir, Skill: shown, Field: field, Rule: rule}}
	}
	if fi, err := top.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if _, err := top.Stat(name); err != nil {
			return refuse("files", "the folder is a symlink that leads out of the skills folder")
		}
	}
	root, err := top.OpenRoot(name)
	if err != nil {
		return refuse("files", "cannot open the folder: "+reason(err))
	}
	defer root.Close()
	w := &walker{root: root, skill: &Skill{Fields: Fields{Name: name}, Dir: filepath.Join(dir, name)}, want: want}
	if err := fs.WalkDir(root.FS(), ".", w.visit); err != nil && !errors.Is(err, errSkip) {
		w.refuse("files", "cannot read the folder: "+reason(err))
	}
	if !w.refused && w.md == nil {
		w.refuse(SkillFile, "missing")
	}
	if w.refused {
		return nil, nil, w.withDir(dir, shown)
	}
	fm, body, err := Parse(w.md)
	if err != nil {
		w.probs = append(w.probs, Problem{Field: "front matter", Rule: err.Error()})
		return nil, nil, w.withDir(dir, shown)
	}
	w.probs = append(w.probs, Validate(fm, name)...)
	if slices.ContainsFunc(w.probs, func(p Problem) bool { return !p.Warning }) {
		return nil, nil, w.withDir(dir, shown)
	}
	s := w.skill
	s.Fields, s.Body = fm.Fields, body
	s.Digest = digest(s.Files)
	return s, w.wanted, w.withDir(dir, shown)
}

// withDir fills in the skills folder and skill of the walk's problems.
func (w *walker) withDir(dir, skill string) []Problem {
	for i := range w.probs {
		w.probs[i].Dir, w.probs[i].Skill = dir, skill
	}
	return w.probs
}

func (w *walker) refuse(field, rule string) {
	w.probs = append(w.probs, Problem{Field: field, Rule: rule})
	w.refused = true
}

// visit is the WalkDir function: each file hashed, bounded; a symlink
// followed only within the folder.
func (w *walker) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	if d.IsDir() {
		return nil
	}
	mode := d.Type()
	if mode&fs.ModeSymlink != 0 {
		fi, err := w.root.Stat(p)
		if err != nil {
			w.refuse("files", fmt.Sprintf("%s is a symlink that leads out of the skill's folder", textShown(p, 200)))
			return errSkip
		}
		if fi.IsDir() {
			w.probs = append(w.probs, Problem{Field: "files", Warning: true,
				Rule: fmt.Sprintf("%s is a symlink to a folder (not followed)", textShown(p, 200))})
			return nil
		}
		mode = fi.Mode().Type()
	}
	if !mode.IsRegular() {
		w.refuse("files", fmt.Sprintf("%s is not a regular file", textShown(p, 200)))
		return errSkip
	}
	if len(w.skill.Files) == MaxSkillFiles {
		w.refuse("files", fmt.Sprintf("more than %d files", MaxSkillFiles))
		return errSkip
	}
	return w.hash(p)
}

// hash reads the file p once: its digest, SKILL.md's content and the
// wanted file's.
func (w *walker) hash(p string) error {
	f, err := w.root.Open(p)
	if err != nil {
		w.refuse("files", fmt.Sprintf("%s: %s", textShown(p, 200), reason(err)))
		return errSkip
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	h := sha256.New()
	var keep *[]byte
	switch p {
	case SkillFile:
		keep = &w.md
	case w.want:
		keep = &w.wanted
	}
	n, err := w.copy(h, f, keep, p == SkillFile)
	if err != nil {
		return err
	}
	if w.refused {
		return errSkip
	}
	w.skill.Files = append(w.skill.Files, File{Path: p, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	if m := fi.ModTime(); m.After(w.skill.Modified) {
		w.skill.Modified = m
	}
	return nil
}

// copy hashes r within the skill's byte budget (and SKILL.md's), keeping
// its first bytes in *keep when keep is set.
func (w *walker) copy(h hash.Hash, r io.Reader, keep *[]byte, md bool) (int64, error) {
	room := int64(MaxSkillBytes) - w.total
	if md {
		room = min(room, MaxSkillMD)
	}
	var buf []byte
	dst := io.Writer(h)
	if keep != nil {
		dst = io.MultiWriter(h, writerFunc(func(b []byte) { buf = appendCapped(buf, b, md) }))
	}
	n, err := io.Copy(dst, io.LimitReader(r, room+1))
	if err != nil {
		return n, err
	}
	if n > room {
		if md {
			w.refuse(SkillFile, fmt.Sprintf("over %d KiB", MaxSkillMD>>10))
		} else {
			w.refuse("files", fmt.Sprintf("over %d MiB together", MaxSkillBytes>>20))
		}
		return n, nil
	}
	w.total += n
	if keep != nil {
		if buf == nil {
			buf = []byte{}
		}
		*keep = buf
	}
	return n, nil
}

// appendCapped appends b to buf, keeping at most MaxFileShown+1 bytes of
// a file other than SKILL.md (which the budget bounds).
func appendCapped(buf, b []byte, md bool) []byte {
	if !md {
		if room := MaxFileShown + 1 - len(buf); room < len(b) {
			b = b[:max(room, 0)]
		}
	}
	return append(buf, b...)
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

// digest is the hex SHA-256 over the files' paths and SHA-256s, in path
// order: one line "path NUL sha256" each.
func digest(files []File) string {
	sorted := slices.Clone(files)
	// sort.Slice: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	for _, f := range sorted {
		fmt.Fprintf(h, "%s\x00%s\n", f.Path, f.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// reason is an os error without the path it repeats.
func reason(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// maxStatEntries bounds statPrint's walk.
const maxStatEntries = 100_000

// errTooMany stops statPrint's walk.
var errTooMany = errors.New("too many entries")

// statPrint fingerprints the folders below dirs by their entries' paths,
// sizes, modes and modification times, reading no file: a turn reads and
// digests the skills again only when it changed. "" when a folder cannot
// be walked or holds over maxStatEntries entries (then they are read
// every time). An edit that keeps a file's size and time shows at the
// next full look (every minute, a reload) and at once to the skill tool,
// which digests what it returns.
func statPrint(dirs []string) string {
	h := sha256.New()
	n := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if n++; n > maxStatEntries {
				return errTooMany
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\n", p, fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
			return nil
		})
		if err != nil {
			return ""
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
