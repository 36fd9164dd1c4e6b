package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/internal/manifest"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

const checkpointColumns = `id, conv_gateway, conv_chat, conv_thread, tool, args, call_id,
	requested_by, approval, created, undone, undone_by, added, no_checkpoint`

// AddCheckpoint stores c (its ID is ignored) with its manifest and returns
// its ID. The blobs its files name must be stored before. A marker
// (c.NoCheckpoint set) is stored with an empty manifest.
func (db *DB) AddCheckpoint(ctx context.Context, c record.Checkpoint) (int64, error) {
	if c.NoCheckpoint != "" {
		c.Files = nil
	}
	files, err := manifest.Encode(c.Files)
	if err != nil {
		return 0, fmt.Errorf("postgres: add checkpoint: %w", err)
	}
	var id int64
	err = db.pool.QueryRow(ctx, `INSERT INTO checkpoints (conv, conv_gateway, conv_chat, conv_thread,
		tool, args, call_id, requested_by, approval, created, undone, undone_by, added, no_checkpoint, files)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id`,
		c.Conv.Key(), c.Conv.Gateway, c.Conv.Chat, c.Conv.Thread, c.Tool, c.Args, c.CallID,
		string(c.RequestedBy), c.Approval, nanos(c.Created), nanos(c.Undone), string(c.UndoneBy), c.Added,
		c.NoCheckpoint, files).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("postgres: add checkpoint: %w", err)
	}
	return id, nil
}

// Checkpoints lists the checkpoints f selects, newest first, without their
// files.
func (db *DB) Checkpoints(ctx context.Context, f record.CheckpointFilter) ([]record.Checkpoint, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Conv != "" {
		where = append(where, "conv = "+arg(f.Conv))
	}
	if f.Live {
		where = append(where, "undone = 0")
	}
	if f.After > 0 {
		where = append(where, "id > "+arg(f.After))
	}
	if f.Recorded {
		where = append(where, "no_checkpoint = ''")
	}
	q := `SELECT ` + checkpointColumns + ` FROM checkpoints`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC"
	if f.Limit > 0 {
		q += " LIMIT " + arg(f.Limit)
	}
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: checkpoints: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (record.Checkpoint, error) { return scanCheckpoint(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: checkpoints: %w", err)
	}
	return out, nil
}

// Checkpoint returns the checkpoint with its files, or record.ErrNotFound.
func (db *DB) Checkpoint(ctx context.Context, id int64) (record.Checkpoint, error) {
	return db.checkpointWhere(ctx, "id = $1", id)
}

// LatestCheckpoint returns the newest real checkpoint of any
// conversation, with its files, or record.ErrNotFound when there is none.
// Markers are skipped: their empty manifest is not the workspace's state.
func (db *DB) LatestCheckpoint(ctx context.Context) (record.Checkpoint, error) {
	return db.checkpointWhere(ctx, "id = (SELECT MAX(id) FROM checkpoints WHERE no_checkpoint = '')")
}

func (db *DB) checkpointWhere(ctx context.Context, where string, args ...any) (record.Checkpoint, error) {
	row := db.pool.QueryRow(ctx, `SELECT `+checkpointColumns+`, files FROM checkpoints WHERE `+where, args...)
	var files []byte
	c, err := scanCheckpoint(row, &files)
	if errors.Is(err, pgq.ErrNoRows) {
		return record.Checkpoint{}, record.ErrNotFound
	}
	if err != nil {
		return record.Checkpoint{}, fmt.Errorf("postgres: checkpoint: %w", err)
	}
	if c.NoCheckpoint != "" {
		return c, nil // a marker: its manifest is empty
	}
	if c.Files, err = manifest.Decode(files); err != nil {
		return record.Checkpoint{}, fmt.Errorf("postgres: checkpoint #%d: %w", c.ID, err)
	}
	return c, nil
}

// MarkUndone marks every checkpoint from ID from on that is not undone yet
// as undone by by at at, in one statement, and returns how many it marked.
func (db *DB) MarkUndone(ctx context.Context, from int64, by core.Identity, at time.Time) (int64, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE checkpoints SET undone = $1, undone_by = $2 WHERE id >= $3 AND undone = 0`,
		nanos(at), string(by), from)
	if err != nil {
		return 0, fmt.Errorf("postgres: mark checkpoints undone: %w", err)
	}
	return tag.RowsAffected(), nil
}

// DeleteCheckpoints removes the checkpoints with the IDs from the index;
// their blobs stay until the caller collects the ones nothing names.
func (db *DB) DeleteCheckpoints(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM checkpoints WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("postgres: delete checkpoints: %w", err)
	}
	return nil
}

// CheckpointBlobs returns the size of every blob some checkpoint names, by
// hex SHA-256.
func (db *DB) CheckpointBlobs(ctx context.Context) (map[string]int64, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, files FROM checkpoints`)
	if err != nil {
		return nil, fmt.Errorf("postgres: checkpoint blobs: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int64)
	for rows.Next() {
		var id int64
		var files []byte
		if err := rows.Scan(&id, &files); err != nil {
			return nil, fmt.Errorf("postgres: checkpoint blobs: %w", err)
		}
		list, err := manifest.Decode(files)
		if err != nil {
			return nil, fmt.Errorf("postgres: checkpoint #%d: %w", id, err)
		}
		for _, f := range list {
			if f.Blob != "" {
				out[f.Blob] = f.Size
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: checkpoint blobs: %w", err)
	}
	return out, nil
}

func scanCheckpoint(row pgq.Row, extra ...any) (record.Checkpoint, error) {
	var c record.Checkpoint
	var created, undone int64
	var requestedBy, undoneBy string
	dest := append([]any{&c.ID, &c.Conv.Gateway, &c.Conv.Chat, &c.Conv.Thread, &c.Tool, &c.Args, &c.CallID,
		&requestedBy, &c.Approval, &created, &undone, &undoneBy, &c.Added, &c.NoCheckpoint}, extra...)
	if err := row.Scan(dest...); err != nil {
		return record.Checkpoint{}, err
	}
	c.Created, c.Undone = fromNanos(created), fromNanos(undone)
	c.RequestedBy, c.UndoneBy = core.Identity(requestedBy), core.Identity(undoneBy)
	return c, nil
}
