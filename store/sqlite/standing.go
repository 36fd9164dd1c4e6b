package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/hitl"
)

const standingColumns = `id, tool, args, added_by, added, conv`

// AddStandingAllow stores s (its ID is ignored) and returns it with its ID;
// a tool and args already allowed return the existing allow.
func (db *DB) AddStandingAllow(ctx context.Context, s hitl.StandingAllow) (hitl.StandingAllow, error) {
	if s.Tool == "" {
		return hitl.StandingAllow{}, fmt.Errorf("sqlite: add standing allow: empty tool name")
	}
	var out hitl.StandingAllow
	err := db.inTx(ctx, "add standing allow", durable, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO standing_allows (tool, args, added_by, added, conv)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (tool, args) DO NOTHING`,
			s.Tool, s.Args, s.AddedBy, nanos(s.Added), s.Conv)
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
func (db *DB) StandingAllows(ctx context.Context) ([]hitl.StandingAllow, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+standingColumns+` FROM standing_allows ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: standing allows: %w", err)
	}
	defer rows.Close()
	var out []hitl.StandingAllow
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
// hitl.ErrNotFound.
func (db *DB) RemoveStandingAllow(ctx context.Context, id int64) (hitl.StandingAllow, error) {
	var out hitl.StandingAllow
	err := db.inTx(ctx, "remove standing allow", durable, func(tx *sql.Tx) error {
		row := tx.QueryRowContext(ctx, `DELETE FROM standing_allows WHERE id = ?
			RETURNING `+standingColumns, id)
		var err error
		out, err = scanStanding(row)
		if errors.Is(err, sql.ErrNoRows) {
			return hitl.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("sqlite: remove standing allow: %w", err)
		}
		return nil
	})
	return out, err
}

// StandingAllowed reports whether tool with exactly args (string equality)
// is allowed.
func (db *DB) StandingAllowed(ctx context.Context, tool, args string) (bool, error) {
	var one int
	err := db.r.QueryRowContext(ctx, `SELECT 1 FROM standing_allows WHERE tool = ? AND args = ?`,
		tool, args).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: standing allowed: %w", err)
	}
	return true, nil
}

func scanStanding(row interface{ Scan(...any) error }) (hitl.StandingAllow, error) {
	var s hitl.StandingAllow
	var added int64
	if err := row.Scan(&s.ID, &s.Tool, &s.Args, &s.AddedBy, &added, &s.Conv); err != nil {
		return hitl.StandingAllow{}, err
	}
	s.Added = fromNanos(added)
	return s, nil
}
