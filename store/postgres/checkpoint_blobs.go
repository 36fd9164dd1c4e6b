package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

var _ store.CheckpointBlobStore = (*DB)(nil)

// PutCheckpointBlob stores content as the blob sum unless it is stored
// already; either way the blob is marked in use now. Of instances storing
// one content at once, exactly one gets added true. A nil content (an
// empty file's) is a blob of size 0.
func (db *DB) PutCheckpointBlob(ctx context.Context, sum string, content []byte) (bool, error) {
	if content == nil {
		content = []byte{} // pgq sends a nil slice as NULL
	}
	var added bool
	// xmax is 0 on a row this statement inserted, set on one it updated.
	err := db.pool.QueryRow(ctx, `INSERT INTO checkpoint_blobs (hash, size, content, used) VALUES ($1, $2, $3, $4)
		ON CONFLICT (hash) DO UPDATE SET used = excluded.used
		RETURNING xmax = 0`, sum, len(content), content, nanos(db.now())).Scan(&added)
	if err != nil {
		return false, fmt.Errorf("postgres: put checkpoint blob: %w", err)
	}
	return added, nil
}

// CheckpointBlob returns the blob sum, or an error matching
// record.ErrNotFound.
func (db *DB) CheckpointBlob(ctx context.Context, sum string) ([]byte, error) {
	var content []byte
	err := db.pool.QueryRow(ctx, `SELECT content FROM checkpoint_blobs WHERE hash = $1`, sum).Scan(&content)
	if errors.Is(err, pgq.ErrNoRows) {
		return nil, fmt.Errorf("postgres: checkpoint blob %.12s: %w", sum, record.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: checkpoint blob %.12s: %w", sum, err)
	}
	return content, nil
}

// TouchCheckpointBlobs marks the stored blobs among sums in use now and
// returns them.
func (db *DB) TouchCheckpointBlobs(ctx context.Context, sums []string) ([]string, error) {
	rows, err := db.pool.Query(ctx, `UPDATE checkpoint_blobs SET used = $2 WHERE hash = ANY($1) RETURNING hash`,
		sums, nanos(db.now()))
	if err != nil {
		return nil, fmt.Errorf("postgres: touch checkpoint blobs: %w", err)
	}
	out, err := pgq.CollectRows(rows, pgq.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: touch checkpoint blobs: %w", err)
	}
	return out, nil
}

// CollectCheckpointBlobs deletes, in one statement, the blobs not in keep
// and not in use within idle of now.
func (db *DB) CollectCheckpointBlobs(ctx context.Context, keep []string, idle time.Duration) (int64, error) {
	if keep == nil {
		keep = []string{}
	}
	tag, err := db.pool.Exec(ctx, `DELETE FROM checkpoint_blobs WHERE NOT (hash = ANY($1)) AND used < $2`,
		keep, nanos(db.now().Add(-idle)))
	if err != nil {
		return 0, fmt.Errorf("postgres: collect checkpoint blobs: %w", err)
	}
	return tag.RowsAffected(), nil
}

// CheckpointBlobsSize is the bytes of all the blobs.
func (db *DB) CheckpointBlobsSize(ctx context.Context) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT COALESCE(SUM(size), 0) FROM checkpoint_blobs`).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: checkpoint blobs size: %w", err)
	}
	return n, nil
}
