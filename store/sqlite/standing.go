package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

const standingColumns = `id, tool, args, added_by, added, conv, files`

// AddStandingAllow stores s (its ID is ignored) and returns it with its ID;
// a tool and args already allowed keep their ID and get s's AddedBy, Added,
// Conv and Files.
func (db *DB) AddStandingAllow(ctx context.Context, s record.StandingAllow) (record.StandingAllow, error) {
	if s.Tool == "" {
		return record.StandingAllow{}, fmt.Errorf("sqlite: add standing allow: empty tool name")
	}
	files, err := encodeFiles(s.Files)
	if err != nil {
		return record.StandingAllow{}, fmt.Errorf("sqlite: add standing allow: %w", err)
	}
	var out record.StandingAllow
	err = db.inTx(ctx, "add standing allow", durable, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO standing_allows (tool, args, added_by, added, conv, files)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tool, args) DO UPDATE SET
			added_by = excluded.added_by, added = excluded.added, conv = excluded.conv, files = excluded.files`,
			s.Tool, s.Args, s.AddedBy, nanos(s.Added), s.Conv, files)
		if err != nil {
			return fmt.Errorf("sqlite: add standing allow: %w", err)
		}
		row := tx.QueryRowContext(ctx, `SELECT `+standingColumns+` FROM standing_allows
			WHERE tool = ? AND args = ?`, s.Tool, s.Args)
		if out, err = scanStanding(row); err != nil {
			return fmt.Errorf("sqlite: add standing allow: %w", err)
		}
		return nil
	})
	return out, err
}

// StandingAllows lists all standing allows in ID order.
func (db *DB) StandingAllows(ctx context.Context) ([]record.StandingAllow, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+standingColumns+` FROM standing_allows ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: standing allows: %w", err)
	}
	defer rows.Close()
	var out []record.StandingAllow
	for rows.Next() {
		s, err := scanStanding(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: standing allows: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: standing allows: %w", err)
	}
	return out, nil
}

// RemoveStandingAllow deletes the allow with the ID and returns it, or
// record.ErrNotFound.
func (db *DB) RemoveStandingAllow(ctx context.Context, id int64) (record.StandingAllow, error) {
	var out record.StandingAllow
	err := db.inTx(ctx, "remove standing allow", durable, func(tx *sql.Tx) error {
		row := tx.QueryRowContext(ctx, `DELETE FROM standing_allows WHERE id = ?
			RETURNING `+standingColumns, id)
		var err error
		out, err = scanStanding(row)
		if errors.Is(err, sql.ErrNoRows) {
			return record.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("sqlite: remove standing allow: %w", err)
		}
		return nil
	})
	return out, err
}

// StandingAllowFor returns the allow for tool with exactly args (string
// equality), or record.ErrNotFound.
func (db *DB) StandingAllowFor(ctx context.Context, tool, args string) (record.StandingAllow, error) {
	row := db.r.QueryRowContext(ctx, `SELECT `+standingColumns+` FROM standing_allows WHERE tool = ? AND args = ?`,
		tool, args)
	s, err := scanStanding(row)
	if errors.Is(err, sql.ErrNoRows) {
		return record.StandingAllow{}, record.ErrNotFound
	}
	if err != nil {
		return record.StandingAllow{}, fmt.Errorf("sqlite: standing allow for %s: %w", tool, err)
	}
	return s, nil
}

func scanStanding(row interface{ Scan(...any) error }) (record.StandingAllow, error) {
	var s record.StandingAllow
	var added int64
	var files sql.NullString
	if err := row.Scan(&s.ID, &s.Tool, &s.Args, &s.AddedBy, &added, &s.Conv, &files); err != nil {
		return record.StandingAllow{}, err
	}
	s.Added = fromNanos(added)
	if files.Valid {
		if err := json.Unmarshal([]byte(files.String), &s.Files); err != nil {
			return record.StandingAllow{}, fmt.Errorf("standing allow #%d: files: %w", s.ID, err)
		}
		if s.Files == nil { // "null" or "{}": binds nothing, unlike NULL
			s.Files = map[string]string{}
		}
	}
	return s, nil
}

// encodeFiles is the files column of a standing allow: JSON, or NULL for
// nil (an allow that predates file binding).
func encodeFiles(files map[string]string) (any, error) {
	if files == nil {
		return nil, nil
	}
	b, err := json.Marshal(files)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	return string(b), nil
}
