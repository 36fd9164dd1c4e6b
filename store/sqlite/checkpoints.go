package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/internal/manifest"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

const checkpointColumns = `id, conv_gateway, conv_chat, conv_thread, tool, args, call_id,
	requested_by, approval, created, undone, undone_by, added, no_checkpoint`

// AddCheckpoint stores c (its ID is ignored) with its manifest in one
// durable transaction and returns its ID. The blobs its files name must be
// on disk before: a crash then leaves orphan blobs, never an index entry
// without its content. A marker (c.NoCheckpoint set) is stored with an
// empty manifest.
func (db *DB) AddCheckpoint(ctx context.Context, c record.Checkpoint) (int64, error) {
	if c.NoCheckpoint != "" {
		c.Files = nil
	}
	files, err := manifest.Encode(c.Files)
	if err != nil {
		return 0, fmt.Errorf("sqlite: add checkpoint: %w", err)
	}
	var id int64
	err = db.inTx(ctx, "add checkpoint", durable, func(tx *sql.Tx) error {
		row := tx.QueryRowContext(ctx, `INSERT INTO checkpoints (conv, conv_gateway, conv_chat, conv_thread,
			tool, args, call_id, requested_by, approval, created, undone, undone_by, added, no_checkpoint, files)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			c.Conv.Key(), c.Conv.Gateway, c.Conv.Chat, c.Conv.Thread, c.Tool, c.Args, c.CallID,
			c.RequestedBy, c.Approval, nanos(c.Created), nanos(c.Undone), c.UndoneBy, c.Added, c.NoCheckpoint, files)
		if err := row.Scan(&id); err != nil {
			return fmt.Errorf("sqlite: add checkpoint: %w", err)
		}
		return nil
	})
	return id, err
}

// Checkpoints lists the checkpoints f selects, newest first, without their
// files.
func (db *DB) Checkpoints(ctx context.Context, f record.CheckpointFilter) ([]record.Checkpoint, error) {
	var where []string
	var args []any
	if f.Conv != "" {
		where, args = append(where, "conv = ?"), append(args, f.Conv)
	}
	if f.Live {
		where = append(where, "undone = 0")
	}
	if f.After > 0 {
		where, args = append(where, "id > ?"), append(args, f.After)
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
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: checkpoints: %w", err)
	}
	defer rows.Close()
	var out []record.Checkpoint
	for rows.Next() {
		c, err := scanCheckpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: checkpoints: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: checkpoints: %w", err)
	}
	return out, nil
}

// Checkpoint returns the checkpoint with its files, or record.ErrNotFound.
func (db *DB) Checkpoint(ctx context.Context, id int64) (record.Checkpoint, error) {
	return db.checkpointWhere(ctx, "id = ?", id)
}

// LatestCheckpoint returns the newest real checkpoint of any
// conversation, with its files, or record.ErrNotFound when there is none.
// Markers of calls that ran without a checkpoint are skipped: their empty
// manifest is not the workspace's state.
func (db *DB) LatestCheckpoint(ctx context.Context) (record.Checkpoint, error) {
	return db.checkpointWhere(ctx, "id = (SELECT MAX(id) FROM checkpoints WHERE no_checkpoint = '')")
}

func (db *DB) checkpointWhere(ctx context.Context, where string, args ...any) (record.Checkpoint, error) {
	row := db.r.QueryRowContext(ctx, `SELECT `+checkpointColumns+`, files FROM checkpoints WHERE `+where, args...)
	var files []byte
	c, err := scanCheckpoint(row, &files)
	if errors.Is(err, sql.ErrNoRows) {
		return record.Checkpoint{}, record.ErrNotFound
	}
	if err != nil {
		return record.Checkpoint{}, fmt.Errorf("sqlite: checkpoint: %w", err)
	}
	if c.NoCheckpoint != "" {
		return c, nil // a marker: its manifest is empty
	}
	if c.Files, err = manifest.Decode(files); err != nil {
		return record.Checkpoint{}, fmt.Errorf("sqlite: checkpoint #%d: %w", c.ID, err)
	}
	return c, nil
}

// MarkUndone marks every checkpoint from ID from on that is not undone yet
// as undone by by at at, in one transaction, and returns how many it
// marked.
func (db *DB) MarkUndone(ctx context.Context, from int64, by core.Identity, at time.Time) (int64, error) {
	var n int64
	err := db.inTx(ctx, "mark checkpoints undone", durable, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE checkpoints SET undone = ?, undone_by = ? WHERE id >= ? AND undone = 0`,
			nanos(at), by, from)
		if err != nil {
			return fmt.Errorf("sqlite: mark checkpoints undone: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// DeleteCheckpoints removes the checkpoints with the IDs from the index;
// their blobs stay until the caller collects the ones nothing names.
func (db *DB) DeleteCheckpoints(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	return db.inTx(ctx, "delete checkpoints", durable, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoints WHERE id = ?`, id); err != nil {
				return fmt.Errorf("sqlite: delete checkpoint #%d: %w", id, err)
			}
		}
		return nil
	})
}

// CheckpointBlobs returns the size of every blob some checkpoint names, by
// hex SHA-256.
func (db *DB) CheckpointBlobs(ctx context.Context) (map[string]int64, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, files FROM checkpoints`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: checkpoint blobs: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int64)
	for rows.Next() {
		var id int64
		var files []byte
		if err := rows.Scan(&id, &files); err != nil {
			return nil, fmt.Errorf("sqlite: checkpoint blobs: %w", err)
		}
		list, err := manifest.Decode(files)
		if err != nil {
			return nil, fmt.Errorf("sqlite: checkpoint #%d: %w", id, err)
		}
		for _, f := range list {
			if f.Blob != "" {
				out[f.Blob] = f.Size
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: checkpoint blobs: %w", err)
	}
	return out, nil
}

func scanCheckpoint(row interface{ Scan(...any) error }, extra ...any) (record.Checkpoint, error) {
	var c record.Checkpoint
	var created, undone int64
	dest := append([]any{&c.ID, &c.Conv.Gateway, &c.Conv.Chat, &c.Conv.Thread, &c.Tool, &c.Args, &c.CallID,
		&c.RequestedBy, &c.Approval, &created, &undone, &c.UndoneBy, &c.Added, &c.NoCheckpoint}, extra...)
	if err := row.Scan(dest...); err != nil {
		return record.Checkpoint{}, err
	}
	c.Created, c.Undone = fromNanos(created), fromNanos(undone)
	return c, nil
}
