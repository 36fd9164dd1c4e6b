package attach

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
)

// errTooBig: the file turned out longer than the limit while it was read.
var errTooBig = errors.New("over the size limit")

// saved is a file written into the workspace.
type saved struct {
	rel  string // path relative to the workspace, slash-separated
	size int64
	sum  [sha256.Size]byte
	head []byte // the first sniffLen bytes, for http.DetectContentType
}

// sniffLen is how much http.DetectContentType looks at.
const sniffLen = 512

// The permissions of what save creates, the bot's user's only, as the
// database and the checkpoint blobs: set exactly, whatever the umask.
const (
	dirPerm  fs.FileMode = 0o700
	filePerm fs.FileMode = 0o600
)

// perm is the permission a saved copy of a gets: filePerm, narrowed to
// the original's (a.Perm) when that is known, so that a copy never has a
// permission its original lacks (a 0400 file is copied 0400, a 0644 one
// 0600).
func perm(a core.Attachment) fs.FileMode {
	if a.Perm == 0 {
		return filePerm
	}
	return filePerm & a.Perm.Perm()
}

// mkdirPrivate creates dir (slash-separated, relative to root) and its
// missing parents with dirPerm exactly (the umask may take bits from a
// new directory: it is set again). A directory that exists is left as it
// is: the operator's choice, or one made before files were kept private.
func mkdirPrivate(root *os.Root, dir string) error {
	p := ""
	for part := range strings.SplitSeq(dir, "/") {
		p = path.Join(p, part)
		err := root.Mkdir(p, dirPerm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := root.Chmod(p, dirPerm); err != nil {
			return err
		}
	}
	return nil
}

// save fetches a into dir (relative to root) as stamp-name: the final
// name is first reserved (created empty, O_EXCL, so no other file is ever
// overwritten: a taken name gets a counter), the bytes are written to a
// temporary file beside it, synced, and renamed over the reservation; the
// directory is synced. At most max bytes are taken. On any failure nothing
// is left behind.
func save(ctx context.Context, root *os.Root, dir, stamp, name string, a core.Attachment, max int64) (saved, error) {
	if err := mkdirPrivate(root, dir); err != nil {
		return saved{}, fmt.Errorf("creating %s: %w", dir, err)
	}
	final, err := reserve(root, dir, stamp, name)
	if err != nil {
		return saved{}, err
	}
	tmp, f, err := createTemp(root, final, perm(a))
	if err != nil {
		root.Remove(final)
		return saved{}, err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			root.Remove(tmp)
			root.Remove(final)
		}
	}()
	sum := sha256.New()
	lw := &limitWriter{w: f, h: sum, max: max}
	if err := a.Fetcher.Fetch(ctx, lw, max); err != nil || lw.over {
		if lw.over || errors.Is(err, core.ErrTooBig) {
			return saved{size: lw.n}, errTooBig
		}
		return saved{}, err
	}
	if err := f.Sync(); err != nil {
		return saved{}, err
	}
	if err := f.Close(); err != nil {
		return saved{}, err
	}
	if err := root.Rename(tmp, final); err != nil {
		return saved{}, err
	}
	done = true
	if err := syncDir(root, dir); err != nil {
		return saved{}, err
	}
	out := saved{rel: final, size: lw.n, head: lw.head}
	copy(out.sum[:], sum.Sum(nil))
	return out, nil
}

// reserve creates dir/stamp-name empty and returns its path; when that
// name is taken, "-2", "-3", … go before the extension.
func reserve(root *os.Root, dir, stamp, name string) (string, error) {
	base := stamp + "-" + name
	for i := 1; i <= 1000; i++ {
		cand := base
		if i > 1 {
			ext := path.Ext(name)
			if len(ext) > maxExt {
				ext = ""
			}
			suffix := "-" + strconv.Itoa(i) + ext
			cand = stamp + "-" + cut(name[:len(name)-len(ext)], MaxName-len(suffix)) + suffix
		}
		p := path.Join(dir, cand)
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, filePerm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return p, f.Close()
	}
	return "", fmt.Errorf("no free name for %s in %s", name, dir)
}

// createTemp creates the hidden temporary file the bytes of final go to,
// with mode perm exactly (set before anything is written; the umask may
// have taken bits from it).
func createTemp(root *os.Root, final string, perm fs.FileMode) (string, *os.File, error) {
	dir, base := path.Split(final)
	for range 10 {
		var r [6]byte
		rand.Read(r[:])
		tmp := path.Join(dir, "."+base+".part-"+hex.EncodeToString(r[:]))
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, filePerm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		if err := f.Chmod(perm); err != nil {
			f.Close()
			root.Remove(tmp)
			return "", nil, err
		}
		return tmp, f, nil
	}
	return "", nil, errors.New("no free temporary file name")
}

// syncDir fsyncs dir, making a rename in it durable.
func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// limitWriter passes at most max bytes to w and h and keeps the first
// sniffLen; a write past max is refused with errTooBig (over is set, n
// counts every byte offered).
type limitWriter struct {
	w    io.Writer
	h    hash.Hash
	max  int64
	n    int64
	over bool
	head []byte
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.n += int64(len(p))
	if l.n > l.max {
		l.over = true
		return 0, errTooBig
	}
	if room := sniffLen - len(l.head); room > 0 {
		l.head = append(l.head, p[:min(room, len(p))]...)
	}
	l.h.Write(p)
	return l.w.Write(p)
}
