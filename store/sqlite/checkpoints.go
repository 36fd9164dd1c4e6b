package sqlite

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
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
	files, err := encodeManifest(c.Files)
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
	if c.Files, err = decodeManifest(files); err != nil {
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
		list, err := decodeManifest(files)
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

// manifestEntry is a CheckpointFile as stored: short keys, times as Unix
// nanoseconds. A path or link target that is not valid UTF-8 (a file
// name is any bytes) goes in PB or LB, as raw bytes: JSON would replace
// its invalid bytes with U+FFFD, and a restore would then remove the file
// and create it under another name.
type manifestEntry struct {
	P  string `json:"p"`
	PB []byte `json:"pb,omitempty"`
	K  string `json:"k,omitempty"` // "" is a file
	M  uint32 `json:"m"`
	S  int64  `json:"s,omitempty"`
	T  int64  `json:"t,omitempty"`
	C  int64  `json:"c,omitempty"`
	I  uint64 `json:"i,omitempty"`
	B  string `json:"b,omitempty"`
	L  string `json:"l,omitempty"`
	LB []byte `json:"lb,omitempty"`
}

// encodeManifest is the files column: gzip-compressed JSON.
func encodeManifest(files []record.CheckpointFile) ([]byte, error) {
	list := make([]manifestEntry, len(files))
	for i, f := range files {
		k := f.Kind
		if k == record.KindFile {
			k = ""
		}
		list[i] = manifestEntry{P: f.Path, K: k, M: f.Mode, S: f.Size, T: nanos(f.MTime), C: nanos(f.CTime),
			I: f.Inode, B: f.Blob, L: f.Target}
		if !utf8.ValidString(f.Path) {
			list[i].P, list[i].PB = "", []byte(f.Path)
		}
		if !utf8.ValidString(f.Target) {
			list[i].L, list[i].LB = "", []byte(f.Target)
		}
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if err := json.NewEncoder(zw).Encode(list); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeManifest reverses encodeManifest.
func decodeManifest(b []byte) ([]record.CheckpointFile, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var list []manifestEntry
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	out := make([]record.CheckpointFile, len(list))
	for i, e := range list {
		k := e.K
		if k == "" {
			k = record.KindFile
		}
		out[i] = record.CheckpointFile{Path: e.P, Kind: k, Mode: e.M, Size: e.S, MTime: fromNanos(e.T),
			CTime: fromNanos(e.C), Inode: e.I, Blob: e.B, Target: e.L}
		if e.PB != nil {
			out[i].Path = string(e.PB)
		}
		if e.LB != nil {
			out[i].Target = string(e.LB)
		}
	}
	return out, nil
}
