package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// BlobTable is a table of blobs in a database several instances share (the
// PostgreSQL store implements it; store.CheckpointBlobs lists the same
// methods). Each row is one blob, keyed by its sum, with the time it was
// last stored or found in use.
type BlobTable interface {
	// PutCheckpointBlob stores content as the blob sum unless it is
	// stored already (then it only marks it in use now), and reports
	// whether it added it.
	PutCheckpointBlob(ctx context.Context, sum string, content []byte) (added bool, err error)
	// CheckpointBlob returns the blob sum, or an error matching
	// record.ErrNotFound.
	CheckpointBlob(ctx context.Context, sum string) ([]byte, error)
	// TouchCheckpointBlobs marks the blobs of sums that are stored in use
	// now and returns them.
	TouchCheckpointBlobs(ctx context.Context, sums []string) ([]string, error)
	// CollectCheckpointBlobs deletes the blobs not in keep and not in use
	// within idle of now, and returns how many it deleted.
	CollectCheckpointBlobs(ctx context.Context, keep []string, idle time.Duration) (int64, error)
	// CheckpointBlobsSize is the bytes of all the blobs.
	CheckpointBlobsSize(ctx context.Context) (int64, error)
}

// DefaultBlobIdle is how long a shared blob store spares a blob stored or
// found in use, named by no checkpoint: far longer than taking a
// checkpoint, between its blobs being stored (or found) and its index row
// being committed, on another instance.
const DefaultBlobIdle = 10 * time.Minute

// tableBlobs is a BlobStore over a BlobTable.
type tableBlobs struct {
	t    BlobTable
	max  int64
	idle time.Duration
}

var _ BlobStore = (*tableBlobs)(nil)

// NewTableBlobs returns the blobs of the shared table t: a blob is held in
// memory while it is written, up to max bytes (tools.checkpoints.max_file;
// DefaultMaxFile when not positive); Collect spares the blobs in use
// within idle (DefaultBlobIdle when not positive).
func NewTableBlobs(t BlobTable, max int64, idle time.Duration) BlobStore {
	if max <= 0 {
		max = DefaultMaxFile
	}
	if idle <= 0 {
		idle = DefaultBlobIdle
	}
	return &tableBlobs{t: t, max: max, idle: idle}
}

func (b *tableBlobs) String() string { return "the database's checkpoint_blobs" }

func (b *tableBlobs) Create(context.Context) (BlobWriter, error) {
	return &tableBlob{b: b}, nil
}

func (b *tableBlobs) Present(ctx context.Context, sums []string) (map[string]bool, error) {
	out := make(map[string]bool, len(sums))
	if len(sums) == 0 {
		return out, nil
	}
	got, err := b.t.TouchCheckpointBlobs(ctx, sums)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: blobs: %w", err)
	}
	for _, s := range got {
		out[s] = true
	}
	return out, nil
}

func (b *tableBlobs) Open(ctx context.Context, sum string) (io.ReadCloser, error) {
	content, err := b.t.CheckpointBlob(ctx, sum)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(content)), nil
}

// Sync does nothing: each blob is committed when it is put.
func (b *tableBlobs) Sync(context.Context) error { return nil }

func (b *tableBlobs) Collect(ctx context.Context, keep map[string]bool) (int64, int, error) {
	removed, err := b.t.CollectCheckpointBlobs(ctx, slices.Sorted(maps.Keys(keep)), b.idle)
	if err != nil {
		return 0, 0, fmt.Errorf("checkpoint: collect: %w", err)
	}
	total, err := b.Total(ctx)
	return total, int(removed), err
}

func (b *tableBlobs) Total(ctx context.Context) (int64, error) {
	n, err := b.t.CheckpointBlobsSize(ctx)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: blobs: %w", err)
	}
	return n, nil
}

// tableBlob is a blob being written, held in memory up to the store's max.
type tableBlob struct {
	b   *tableBlobs
	buf bytes.Buffer
}

func (w *tableBlob) Write(p []byte) (int, error) {
	// One byte past max is taken: a caller reading max+1 bytes to see
	// whether a file grew over its limit says so itself.
	if int64(w.buf.Len()+len(p)) > w.b.max+1 {
		return 0, fmt.Errorf("checkpoint: blob over %s", Size(w.b.max))
	}
	return w.buf.Write(p)
}

func (w *tableBlob) Commit(ctx context.Context, sum string, _ bool) (bool, error) {
	added, err := w.b.t.PutCheckpointBlob(ctx, sum, w.buf.Bytes())
	if err != nil {
		return false, fmt.Errorf("checkpoint: blob: %w", err)
	}
	w.buf = bytes.Buffer{}
	return added, nil
}

func (w *tableBlob) Close() error {
	w.buf = bytes.Buffer{}
	return nil
}
