package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

const standingColumns = `id, tool, args, added_by, added, conv, files`

// AddStandingAllow stores s (its ID is ignored) and returns it with its ID;
// a tool and args already allowed keep their ID and get s's AddedBy, Added,
// Conv and Files.
func (db *DB) AddStandingAllow(ctx context.Context, s record.StandingAllow) (record.StandingAllow, error) {
	if s.Tool == "" {
		return record.StandingAllow{}, fmt.Errorf("postgres: add standing allow: empty tool name")
	}
	files, err := encodeFiles(s.Files)
	if err != nil {
		return record.StandingAllow{}, fmt.Errorf("postgres: add standing allow: %w", err)
	}
	out, err := scanStanding(db.pool.QueryRow(ctx, `INSERT INTO standing_allows (tool, args, added_by, added, conv, files)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tool, args) DO UPDATE SET
		added_by = excluded.added_by, added = excluded.added, conv = excluded.conv, files = excluded.files
		RETURNING `+standingColumns,
		s.Tool, s.Args, string(s.AddedBy), nanos(s.Added), s.Conv, files))
	if err != nil {
		return record.StandingAllow{}, fmt.Errorf("postgres: add standing allow: %w", err)
	}
	return out, nil
}

// StandingAllows lists all standing allows in ID order.
func (db *DB) StandingAllows(ctx context.Context) ([]record.StandingAllow, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+standingColumns+` FROM standing_allows ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: standing allows: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (record.StandingAllow, error) { return scanStanding(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: standing allows: %w", err)
	}
	return out, nil
}

// RemoveStandingAllow deletes the allow with the ID and returns it, or
// record.ErrNotFound.
func (db *DB) RemoveStandingAllow(ctx context.Context, id int64) (record.StandingAllow, error) {
	out, err := scanStanding(db.pool.QueryRow(ctx, `DELETE FROM standing_allows WHERE id = $1
		RETURNING `+standingColumns, id))
	if errors.Is(err, pgq.ErrNoRows) {
		return record.StandingAllow{}, record.ErrNotFound
	}
	if err != nil {
		return record.StandingAllow{}, fmt.Errorf("postgres: remove standing allow: %w", err)
	}
	return out, nil
}

// StandingAllowFor returns the allow for tool with exactly args (string
// equality), or record.ErrNotFound.
func (db *DB) StandingAllowFor(ctx context.Context, tool, args string) (record.StandingAllow, error) {
	s, err := scanStanding(db.pool.QueryRow(ctx, `SELECT `+standingColumns+` FROM standing_allows
		WHERE tool = $1 AND args = $2`, tool, args))
	if errors.Is(err, pgq.ErrNoRows) {
		return record.StandingAllow{}, record.ErrNotFound
	}
	if err != nil {
		return record.StandingAllow{}, fmt.Errorf("postgres: standing allow for %s: %w", tool, err)
	}
	return s, nil
}

func scanStanding(row pgq.Row) (record.StandingAllow, error) {
	var s record.StandingAllow
	var added int64
	var addedBy string
	var files *string
	if err := row.Scan(&s.ID, &s.Tool, &s.Args, &addedBy, &added, &s.Conv, &files); err != nil {
		return record.StandingAllow{}, err
	}
	s.Added, s.AddedBy = fromNanos(added), core.Identity(addedBy)
	if files != nil {
		if err := json.Unmarshal([]byte(*files), &s.Files); err != nil {
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
func encodeFiles(files map[string]string) (*string, error) {
	if files == nil {
		return nil, nil
	}
	b, err := json.Marshal(files)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	s := string(b)
	return &s, nil
}
