package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// fileBlobs is the blob directory: each blob a file <dir>/<2 hex>/<sum>,
// written to a temporary file and renamed, the directories that gained an
// entry synced. Its total is counted in memory, recounted by Collect.
type fileBlobs struct {
	dir     string
	syncDir func(dir string) error
	total   int64
	// dirs are the directories to sync at the next Sync; batch is set when
	// a blob was committed without its own sync (one syncfs then).
	dirs  map[string]bool
	batch bool
}

var _ BlobStore = (*fileBlobs)(nil)

// NewFileBlobs returns the blob directory dir (created 0700 and synced,
// with its missing parents, when missing), dir resolved to its real path.
func NewFileBlobs(dir string) (BlobStore, error) {
	return newFileBlobs(dir, syncDir)
}

func newFileBlobs(dir string, sync func(string) error) (*fileBlobs, error) {
	if err := mkdirDurable(dir, sync); err != nil {
		return nil, fmt.Errorf("checkpoint: blobs: %w", err)
	}
	real, err := realPath(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: blobs: %w", err)
	}
	return &fileBlobs{dir: real, syncDir: sync, dirs: make(map[string]bool)}, nil
}

func (b *fileBlobs) String() string { return b.dir }

// path is where the content with the hex SHA-256 sum lives.
func (b *fileBlobs) path(sum string) string {
	return filepath.Join(b.dir, sum[:2], sum)
}

func (b *fileBlobs) Create(context.Context) (BlobWriter, error) {
	tmp, err := os.CreateTemp(b.dir, "tmp-")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return &fileBlob{b: b, tmp: tmp}, nil
}

func (b *fileBlobs) Present(_ context.Context, sums []string) (map[string]bool, error) {
	out := make(map[string]bool, len(sums))
	for _, s := range sums {
		if _, err := os.Stat(b.path(s)); err == nil {
			out[s] = true
		}
	}
	return out, nil
}

func (b *fileBlobs) Open(_ context.Context, sum string) (io.ReadCloser, error) {
	return os.Open(b.path(sum))
}

// Sync syncs the directories that gained an entry, or the whole file
// system once when blobs were committed without their own sync (many new
// blobs: one syncfs rather than one fsync each).
func (b *fileBlobs) Sync(context.Context) error {
	defer func() { b.dirs, b.batch = make(map[string]bool), false }()
	if b.batch {
		if err := syncFS(b.dir); err != nil {
			return fmt.Errorf("checkpoint: sync %s: %w", b.dir, err)
		}
		return nil
	}
	for d := range b.dirs {
		if err := b.syncDir(d); err != nil {
			return fmt.Errorf("checkpoint: sync %s: %w", d, err)
		}
	}
	return nil
}

func (b *fileBlobs) Collect(_ context.Context, keep map[string]bool) (int64, int, error) {
	var total int64
	removed := 0
	err := filepath.WalkDir(b.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, "tmp-") || !keep[name] {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return err
			}
			removed++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("checkpoint: collect %s: %w", b.dir, err)
	}
	b.total = total
	return total, removed, nil
}

func (b *fileBlobs) Total(context.Context) (int64, error) { return b.total, nil }

// fileBlob is a blob being written to a temporary file of the directory.
type fileBlob struct {
	b   *fileBlobs
	tmp *os.File
	n   int64
}

func (w *fileBlob) Write(p []byte) (int, error) {
	n, err := w.tmp.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *fileBlob) Commit(_ context.Context, sum string, sync bool) (bool, error) {
	b := w.b
	var err error
	if sync {
		err = w.tmp.Sync()
	}
	if cerr := w.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("checkpoint: blob: %w", err)
	}
	dst := b.path(sum)
	if _, err := os.Stat(dst); err == nil {
		return false, nil
	}
	if _, err := os.Stat(filepath.Dir(dst)); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(filepath.Dir(dst), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("checkpoint: %w", err)
		}
		// The new directory's own entry must be durable too, or a crash
		// could lose it and every blob in it that the index names.
		b.dirs[b.dir] = true
	}
	if err := os.Rename(w.tmp.Name(), dst); err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	b.dirs[filepath.Dir(dst)] = true
	if !sync {
		b.batch = true
	}
	b.total += w.n
	return true, nil
}

func (w *fileBlob) Close() error {
	_ = w.tmp.Close()
	if err := os.Remove(w.tmp.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
