package checkpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// change is one path a restore changed.
type change struct {
	path    string
	removed bool // it did not exist in the checkpoint: created since, now removed
}

// restore makes the workspace hold exactly the entries of want, recorded
// at taken (the checkpoint's time): entries created since are removed
// (special files such as pipes and sockets, which no checkpoint records,
// included), changed files get their recorded bytes, mode and
// modification time back, deleted ones come back. It works through an
// os.Root, so no symlink (recorded or planted since) leads it out of the
// workspace, and replaces a file rather than writing, chmodding or
// touching it in place, so no hard link planted since does either. m.mu
// is held and no changing call runs.
func (m *Manager) restore(ctx context.Context, want []record.CheckpointFile, taken time.Time) ([]change, error) {
	cur, err := m.walk(ctx, true)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(m.o.Workspace)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: restore: %w", err)
	}
	defer root.Close()
	wantBy := make(map[string]record.CheckpointFile, len(want))
	for _, f := range want {
		wantBy[f.Path] = f
	}
	if err := m.checkBlobs(ctx, cur, want, taken); err != nil {
		return nil, err
	}
	if err := openUpDirs(root, cur); err != nil {
		return nil, err
	}
	kept, changes, err := removeUnwanted(root, cur, wantBy)
	if err != nil {
		return changes, err
	}
	if changes, err = m.putBack(ctx, root, want, kept, taken, changes); err != nil {
		return changes, err
	}
	// sort.Slice: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.Slice(changes, func(i, j int) bool { return changes[i].path < changes[j].path })
	return changes, m.syncParents(changes)
}

// openUpDirs opens up, for the restore, each directory of cur without
// write and search permission for its owner (a bot that is not root
// could neither remove nor create entries in it), and records the mode
// it now has in cur; every directory gets its recorded mode at the end
// (putBack), children before parents.
func openUpDirs(root *os.Root, cur []record.CheckpointFile) error {
	for i, c := range cur {
		if c.Kind == record.KindDir && c.Mode&0o700 != 0o700 {
			if err := root.Chmod(filepath.FromSlash(c.Path), fs.FileMode(c.Mode|0o700)); err != nil {
				return fmt.Errorf("checkpoint: restore: chmod %s: %w", c.Path, err)
			}
			cur[i].Mode |= 0o700
		}
	}
	return nil
}

// removeUnwanted removes, children before their parents, each entry of
// cur that the checkpoint (wantBy) did not have or had as another kind
// (or as a symlink to elsewhere). It returns the entries kept, by path,
// and the removals of paths the checkpoint did not have.
func removeUnwanted(root *os.Root, cur []record.CheckpointFile, wantBy map[string]record.CheckpointFile) (map[string]record.CheckpointFile, []change, error) {
	var changes []change
	kept := make(map[string]record.CheckpointFile, len(cur))
	for _, c := range slices.Backward(cur) {
		w, ok := wantBy[c.Path]
		if ok && w.Kind == c.Kind && (c.Kind != record.KindSymlink || w.Target == c.Target) {
			kept[c.Path] = c
			continue
		}
		if err := root.RemoveAll(filepath.FromSlash(c.Path)); err != nil {
			return kept, changes, fmt.Errorf("checkpoint: restore: remove %s: %w", c.Path, err)
		}
		if !ok {
			changes = append(changes, change{path: c.Path, removed: true})
		}
	}
	return kept, changes, nil
}

// putBack puts back, parents before their children, each entry of want
// that differs from the one kept at its path (or is missing), then gives
// every directory its recorded mode, children before parents. It
// returns changes with the paths it changed added.
func (m *Manager) putBack(ctx context.Context, root *os.Root, want []record.CheckpointFile, kept map[string]record.CheckpointFile, taken time.Time, changes []change) ([]change, error) {
	var dirs []dirMode
	for _, w := range want {
		if ctx.Err() != nil {
			return changes, ctx.Err()
		}
		c, had := kept[w.Path]
		if w.Kind == record.KindDir {
			d, err := openDir(root, w, c, had)
			if err != nil {
				return changes, err
			}
			if !had {
				changes = append(changes, change{path: w.Path})
			}
			dirs = append(dirs, d)
			continue
		}
		changed, err := m.put(ctx, root, w, c, had, taken)
		if err != nil {
			return changes, err
		}
		if changed {
			changes = append(changes, change{path: w.Path})
		}
	}
	for _, d := range slices.Backward(dirs) {
		if err := chmodIf(root, d.name, d.want, d.now, true); err != nil {
			return changes, err
		}
	}
	return changes, nil
}

// syncParents makes the entries the restore changed durable: each changed
// path's directory is synced (file contents were synced before their
// rename), so that a crash after /undo answered cannot leave the workspace
// half restored while the index says the checkpoint was undone.
func (m *Manager) syncParents(changes []change) error {
	seen := map[string]bool{}
	for _, c := range changes {
		dir := path.Dir(c.path)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		// A directory removed with its tree is synced in its parent.
		if err := m.o.syncDir(filepath.Join(m.o.Workspace, filepath.FromSlash(dir))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checkpoint: restore: sync %s: %w", dir, err)
		}
	}
	return nil
}

// put makes the file or symbolic link at w.Path what w records at taken;
// c is what is there (had false: nothing). It reports whether it changed
// the content or the kind. Directories are openDir's.
func (m *Manager) put(ctx context.Context, root *os.Root, w, c record.CheckpointFile, had bool, taken time.Time) (bool, error) {
	name := filepath.FromSlash(w.Path)
	switch w.Kind {
	case record.KindSymlink:
		if had {
			return false, nil // same target, or it was removed above
		}
		if err := root.Symlink(w.Target, name); err != nil {
			return false, fmt.Errorf("checkpoint: restore: symlink %s: %w", w.Path, err)
		}
		return true, nil
	}
	if had && c.Size == w.Size {
		same, err := m.sameContent(root, name, w, c, taken)
		if err != nil {
			return false, err
		}
		if same && c.Mode == w.Mode && (w.MTime.IsZero() || c.MTime.Equal(w.MTime)) {
			return false, nil
		}
		if same {
			// The same bytes, another mode or modification time (chmod,
			// touch, a formatter): the file is replaced, never changed
			// in place, since it may be a hard link a later command made
			// to a file outside the workspace.
			return false, m.writeBlob(ctx, root, name, w)
		}
	}
	return true, m.writeBlob(ctx, root, name, w)
}

// dirMode is a directory of the checkpoint: the mode it has during the
// restore and the one it is given at the end.
type dirMode struct {
	name      string
	now, want uint32
}

// openDir makes the directory w (c is what is there, had false: nothing)
// with write and search permission for its owner, its recorded mode left
// for the end of the restore.
func openDir(root *os.Root, w, c record.CheckpointFile, had bool) (dirMode, error) {
	d := dirMode{name: filepath.FromSlash(w.Path), now: c.Mode, want: w.Mode}
	if had {
		return d, nil
	}
	d.now = w.Mode | 0o700
	if err := root.Mkdir(d.name, fs.FileMode(d.now)); err != nil {
		return d, fmt.Errorf("checkpoint: restore: mkdir %s: %w", w.Path, err)
	}
	// Mkdir's mode passes through the umask.
	return d, chmodIf(root, d.name, d.now, 0, false)
}

// sameContent reports whether the file c at name holds w's content,
// recorded at taken: when its size, times and inode are the recorded ones
// and w was last changed outside the racy window before taken (as the
// stat cache of a checkpoint decides, see unchanged), or when it hashes to
// w's blob. A file changed within the window may have been changed again
// since, within the same tick of the file system's clock, its times and
// inode left as recorded.
func (m *Manager) sameContent(root *os.Root, name string, w, c record.CheckpointFile, taken time.Time) (bool, error) {
	if statSame(w, c, taken) {
		return true, nil
	}
	f, err := root.OpenFile(name, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return false, fmt.Errorf("checkpoint: restore: read %s: %w", w.Path, err)
	}
	defer f.Close()
	sum, err := sha256Hex(f)
	if err != nil {
		return false, fmt.Errorf("checkpoint: restore: read %s: %w", w.Path, err)
	}
	return sum == w.Blob, nil
}

// sha256Hex is the hex SHA-256 of what r holds: a blob's name.
func sha256Hex(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// statSame reports whether the file c holds w's content, recorded at
// taken, by its times and inode alone (see sameContent).
func statSame(w, c record.CheckpointFile, taken time.Time) bool {
	return c.MTime.Equal(w.MTime) && c.CTime.Equal(w.CTime) && c.Inode == w.Inode && !w.MTime.IsZero() &&
		w.CTime.Before(taken.Add(-racyWindow))
}

// damagedError says a blob a restore needs does not hold the content its
// name, its SHA-256, says (a bit flipped, a file truncated).
type damagedError struct{ path string }

func (e *damagedError) Error() string {
	return "the saved content of " + e.path + " is damaged (its blob does not match its hash)"
}

// checkBlobs verifies, before a restore changes anything, the blobs it
// may write: those of the files of want that are not, by their times and
// inode, still what the checkpoint recorded (cur is the workspace now). A
// damaged blob found halfway would leave the workspace half restored, the
// files created since already removed; found here, it is a *damagedError
// and nothing changed.
func (m *Manager) checkBlobs(ctx context.Context, cur, want []record.CheckpointFile, taken time.Time) error {
	curBy := make(map[string]record.CheckpointFile, len(cur))
	for _, c := range cur {
		curBy[c.Path] = c
	}
	checked := make(map[string]bool)
	for _, w := range want {
		if w.Kind != record.KindFile || checked[w.Blob] {
			continue
		}
		if c, ok := curBy[w.Path]; ok && c.Kind == record.KindFile && c.Size == w.Size && statSame(w, c, taken) {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		checked[w.Blob] = true
		f, err := m.blobs.Open(ctx, w.Blob)
		if err != nil {
			return fmt.Errorf("checkpoint: restore %s: blob: %w", w.Path, err)
		}
		sum, err := sha256Hex(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("checkpoint: restore %s: blob: %w", w.Path, err)
		}
		if sum != w.Blob {
			return &damagedError{path: w.Path}
		}
	}
	return nil
}

// writeBlob writes w's content to name through a temporary file in the
// same directory and a rename, checking the blob's hash on the way.
func (m *Manager) writeBlob(ctx context.Context, root *os.Root, name string, w record.CheckpointFile) error {
	src, err := m.blobs.Open(ctx, w.Blob)
	if err != nil {
		return fmt.Errorf("checkpoint: restore %s: blob: %w", w.Path, err)
	}
	defer src.Close()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(name), ".gatehouse-undo-"+hex.EncodeToString(rnd[:]))
	dst, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: restore %s: %w", w.Path, err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(dst, h), src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil && hex.EncodeToString(h.Sum(nil)) != w.Blob {
		err = errors.New("the stored blob does not match its hash (damaged)")
	}
	if err == nil {
		err = root.Chmod(tmp, fs.FileMode(w.Mode))
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("checkpoint: restore %s: %w", w.Path, err)
	}
	if !w.MTime.IsZero() {
		if err := root.Chtimes(name, time.Now(), w.MTime); err != nil {
			return fmt.Errorf("checkpoint: restore %s: %w", w.Path, err)
		}
	}
	return nil
}

// chmodIf sets mode when the entry had another one.
func chmodIf(root *os.Root, name string, want, had uint32, exists bool) error {
	if exists && want == had {
		return nil
	}
	if err := root.Chmod(name, fs.FileMode(want)); err != nil {
		return fmt.Errorf("checkpoint: restore: chmod %s: %w", filepath.ToSlash(name), err)
	}
	return nil
}

// diff lists the paths whose entries differ between two manifests.
func diff(a, b []record.CheckpointFile) []string {
	am := make(map[string]record.CheckpointFile, len(a))
	for _, f := range a {
		am[f.Path] = f
	}
	var out []string
	for _, f := range b {
		o, ok := am[f.Path]
		delete(am, f.Path)
		if !ok || o.Kind != f.Kind || o.Blob != f.Blob || o.Target != f.Target || (o.Kind == record.KindFile && o.Mode != f.Mode) {
			out = append(out, f.Path)
		}
	}
	for p := range am {
		out = append(out, p)
	}
	slices.Sort(out)
	return dropChildren(out)
}

// dropChildren leaves out paths under a listed directory path, so that a
// created tree counts as its top.
func dropChildren(sorted []string) []string {
	var out []string
	for _, p := range sorted {
		if n := len(out); n > 0 && isUnder(p, out[n-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func isUnder(p, dir string) bool {
	rel := path.Clean(p)
	return len(rel) > len(dir) && rel[:len(dir)] == dir && rel[len(dir)] == '/'
}
