package checkpoint

import (
	"context"
	"io"
)

// BlobStore keeps the content-addressed blobs of checkpoints, each named by
// the hex SHA-256 of its content: a directory beside the database
// (NewFileBlobs, one instance) or a table of the shared database
// (NewTableBlobs, every instance on it, so that /undo works from any).
// A Manager serialises its calls; several Managers (instances) may share
// a table.
type BlobStore interface {
	// Create begins a blob: its content is written to the BlobWriter, then
	// named by Commit or dropped by Close.
	Create(ctx context.Context) (BlobWriter, error)
	// Present reports which of sums are stored. A shared store also marks
	// them in use now, so that another instance's collection spares them
	// while a checkpoint that names them again is being taken.
	Present(ctx context.Context, sums []string) (map[string]bool, error)
	// Open reads the blob sum; an error when it is not stored.
	Open(ctx context.Context, sum string) (io.ReadCloser, error)
	// Sync makes durable the blobs committed since the last Sync.
	Sync(ctx context.Context) error
	// Collect deletes the blobs not in keep (and leftovers of writes that
	// never committed), and returns the bytes left and how many it
	// deleted. A shared store spares the blobs in use lately.
	Collect(ctx context.Context, keep map[string]bool) (total int64, removed int, err error)
	// Total is the bytes stored.
	Total(ctx context.Context) (int64, error)
	// String says where the blobs are, for the log.
	String() string
}

// BlobWriter receives a new blob's content.
type BlobWriter interface {
	io.Writer
	// Commit stores what was written as the blob sum (its hex SHA-256),
	// made durable at once when sync (else at the store's next Sync), and
	// reports whether it added it: false when that content was stored
	// already (nothing changes).
	Commit(ctx context.Context, sum string, sync bool) (added bool, err error)
	// Close drops the content unless it was committed.
	Close() error
}
