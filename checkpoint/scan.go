package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// plan is a checkpoint being made: the workspace's entries, with the files
// whose content must be hashed and copied.
type plan struct {
	started time.Time
	files   []record.CheckpointFile
	pending []int            // indexes into files without a Blob yet
	need    int64            // bytes of the pending files
	reused  map[string]int64 // blobs the plan names from the last checkpoint
}

// transient reports whether name is one of the temporary files a write
// goes through: write_file's ".<name>.tmp-<12 hex>" (core/tools) and a
// restore's ".gatehouse-undo-<12 hex>". A checkpoint leaves them out: one
// seen while a call of another conversation writes is half a file, and
// one left by a crash is no state to restore. A restore, which runs while
// no call does, removes any it finds.
func transient(name string) bool {
	rest, ok := strings.CutPrefix(name, ".gatehouse-undo-")
	if !ok {
		i := strings.LastIndex(name, ".tmp-")
		if !strings.HasPrefix(name, ".") || i < 2 {
			return false
		}
		rest = name[i+len(".tmp-"):]
	}
	return textutil.Shape(rest, 12, 12, "0123456789abcdef")
}

// walk lists the workspace's entries (sorted, workspace-relative, slash
// separated) from a stat walk that never follows a symlink. Special files
// (sockets, devices, pipes), which a checkpoint does not record, are left
// out unless specials (a restore, which removes them) asks for them as
// kindSpecial; the blob directory is left out if it lies inside the
// workspace. An entry that vanishes during the walk is left out.
func (m *Manager) walk(ctx context.Context, specials bool) ([]record.CheckpointFile, error) {
	var out []record.CheckpointFile
	err := filepath.WalkDir(m.o.Workspace, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != m.o.Workspace {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if path == m.o.Workspace {
			return nil
		}
		if path == m.o.Blobs {
			return filepath.SkipDir
		}
		if !specials && !d.IsDir() && transient(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(m.o.Workspace, path)
		if err != nil {
			return err
		}
		f, ok, err := entryOf(path, filepath.ToSlash(rel), info)
		if err != nil {
			return err
		}
		if !ok && specials {
			f, ok = record.CheckpointFile{Path: filepath.ToSlash(rel), Kind: kindSpecial}, true
		}
		if !ok {
			return nil
		}
		out = append(out, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: walk %s: %w", m.o.Workspace, err)
	}
	return out, nil
}

// kindSpecial is the kind walk gives a special file when asked for them.
// No checkpoint records one, so a restore removes every one it finds.
const kindSpecial = "special"

// entryOf describes one workspace entry; ok is false for a special file.
func entryOf(path, rel string, info fs.FileInfo) (f record.CheckpointFile, ok bool, err error) {
	f = record.CheckpointFile{Path: rel, Mode: uint32(info.Mode().Perm()), MTime: info.ModTime()}
	switch t := info.Mode().Type(); {
	case t == 0:
		f.Kind, f.Size = record.KindFile, info.Size()
		f.Inode, f.CTime = fileIDs(info)
	case t == fs.ModeDir:
		f.Kind, f.MTime = record.KindDir, time.Time{}
	case t == fs.ModeSymlink:
		f.Kind, f.MTime = record.KindSymlink, time.Time{}
		if f.Target, err = os.Readlink(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return f, false, nil
			}
			return f, false, err
		}
	default:
		return f, false, nil
	}
	return f, true, nil
}

// scan plans a checkpoint: prev (nil for none) gives the blobs of files
// whose size, times and inode are unchanged since it was taken. It checks
// the limits: no file over MaxFile, and the workspace's files within
// MaxTotal.
func (m *Manager) scan(ctx context.Context, prev *record.Checkpoint) (*plan, error) {
	p := &plan{started: m.o.Now(), reused: make(map[string]int64)}
	files, err := m.walk(ctx, false)
	if err != nil {
		return nil, err
	}
	cache := make(map[string]record.CheckpointFile)
	if prev != nil {
		for _, f := range prev.Files {
			if f.Kind == record.KindFile {
				cache[f.Path] = f
			}
		}
	}
	var total int64
	for i, f := range files {
		if f.Kind != record.KindFile {
			continue
		}
		if f.Size > m.o.MaxFile {
			return nil, &limitError{fmt.Sprintf("%s is %s, over tools.checkpoints.max_file (%s)",
				f.Path, Size(f.Size), Size(m.o.MaxFile))}
		}
		if c, ok := cache[f.Path]; ok && unchanged(c, f, prev.Created) {
			files[i].Blob = c.Blob
			if _, seen := p.reused[c.Blob]; !seen {
				total += f.Size
			}
			p.reused[c.Blob] = f.Size
			continue
		}
		p.pending = append(p.pending, i)
		p.need += f.Size
		total += f.Size
	}
	if total > m.o.MaxTotal {
		return nil, &limitError{fmt.Sprintf("the workspace holds %s of files, over tools.checkpoints.max_total (%s)",
			Size(total), Size(m.o.MaxTotal))}
	}
	p.files = files
	return p, nil
}

// unchanged reports whether cur is the file c recorded: same size, times,
// inode and mode. A file modified within the second before the last
// checkpoint was taken (racyWindow) is hashed again: its content may have
// changed after it was read within the same tick of the file system's
// clock, leaving its times as they were.
func unchanged(c, cur record.CheckpointFile, taken time.Time) bool {
	return c.Blob != "" && c.Size == cur.Size && c.MTime.Equal(cur.MTime) && c.CTime.Equal(cur.CTime) &&
		c.Inode == cur.Inode && c.Mode == cur.Mode && !c.MTime.IsZero() && cur.CTime.Before(taken.Add(-racyWindow))
}

// racyWindow is the coarsest time stamp granularity of the file systems a
// workspace lives on (FAT's two seconds).
const racyWindow = 2 * time.Second

// store hashes and copies the plan's pending files into the blob store
// (each new content once, synced), and returns the bytes added.
func (m *Manager) store(ctx context.Context, p *plan) (int64, error) {
	if len(p.pending) == 0 {
		return 0, nil
	}
	root, err := os.OpenRoot(m.o.Workspace)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	defer root.Close()
	var added int64
	// Many new blobs (a first checkpoint) are made durable by one syncfs
	// at the end rather than one fsync each.
	batch := len(p.pending) > batchSync
	for _, i := range p.pending {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		n, err := m.copyIn(ctx, root, &p.files[i], !batch)
		if err != nil {
			return 0, err
		}
		added += n
	}
	if err := m.blobs.Sync(ctx); err != nil {
		return 0, err
	}
	return added, nil
}

// batchSync is how many new blobs a checkpoint syncs one by one; past it,
// one syncfs of the blob directory's file system syncs them all.
const batchSync = 64

// copyIn hashes f's content while copying it to a new blob, then names
// the blob by its hash, or drops it when that content is already stored.
// It returns the bytes added; sync syncs the blob itself (else the
// store's Sync does).
func (m *Manager) copyIn(ctx context.Context, root *os.Root, f *record.CheckpointFile, sync bool) (int64, error) {
	src, err := root.OpenFile(filepath.FromSlash(f.Path), os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: read %s: %w", f.Path, err)
	}
	defer src.Close()
	before, err := src.Stat()
	if err != nil || !before.Mode().IsRegular() {
		return 0, fmt.Errorf("checkpoint: read %s: not a regular file any more", f.Path)
	}
	w, err := m.blobs.Create(ctx)
	if err != nil {
		return 0, err
	}
	defer w.Close() // a no-op once committed
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(h, w), io.LimitReader(src, m.o.MaxFile+1))
	if err == nil && n > m.o.MaxFile {
		err = &limitError{fmt.Sprintf("%s grew over tools.checkpoints.max_file (%s)", f.Path, Size(m.o.MaxFile))}
	}
	if err != nil {
		return 0, fmt.Errorf("checkpoint: copy %s: %w", f.Path, err)
	}
	f.Blob, f.Size = hex.EncodeToString(h.Sum(nil)), n
	if after, err := src.Stat(); err != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != n {
		f.MTime = time.Time{} // changed while read: hash it again next time
	}
	present, err := m.blobs.Present(ctx, []string{f.Blob})
	if err != nil {
		return 0, err
	}
	if present[f.Blob] {
		return 0, nil
	}
	if m.total+n > m.o.MaxTotal {
		// The plan made room for the sizes the walk saw; a file that grew
		// since (a process still writing it) must not take the blob
		// store past its bound.
		return 0, &limitError{fmt.Sprintf("%s grew while it was recorded, and the blob store would go over tools.checkpoints.max_total (%s)",
			f.Path, Size(m.o.MaxTotal))}
	}
	added, err := w.Commit(ctx, f.Blob, sync)
	if err != nil || !added {
		return 0, err
	}
	m.total += n
	return n, nil
}

// mkdirDurable creates dir (0700) and its missing parents, syncing the
// directory that holds each one it creates, so that a crash cannot lose
// it.
func mkdirDurable(dir string, sync func(string) error) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirDurable(parent, sync); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return sync(parent)
}

// syncDir makes the directory's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Size renders a byte count for people: 512 B, 3.4 KiB, 16 MiB.
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n), ""
	for _, s := range []string{"KiB", "MiB", "GiB", "TiB"} {
		v, suffix = v/unit, s
		if v < unit {
			break
		}
	}
	return strings.Replace(fmt.Sprintf("%.1f %s", v, suffix), ".0 ", " ", 1)
}
