package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// SetSkillState records st for its skill, replacing what was.
func (db *DB) SetSkillState(ctx context.Context, st record.SkillState) error {
	if st.Name == "" || st.Digest == "" {
		return errors.New("sqlite: set skill state: empty name or digest")
	}
	enabled := 0
	if st.Enabled {
		enabled = 1
	}
	if _, err := db.exec(ctx, `INSERT INTO skills (name, digest, enabled, by_id, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET digest = excluded.digest, enabled = excluded.enabled,
		by_id = excluded.by_id, at = excluded.at`,
		st.Name, st.Digest, enabled, string(st.By), nanos(st.At)); err != nil {
		return fmt.Errorf("sqlite: set skill state %s: %w", st.Name, err)
	}
	return nil
}

// SkillStates returns every skill's recorded state, by name.
func (db *DB) SkillStates(ctx context.Context) ([]record.SkillState, error) {
	rows, err := db.query(ctx, `SELECT name, digest, enabled, by_id, at FROM skills ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: skill states: %w", err)
	}
	defer rows.Close()
	var out []record.SkillState
	for rows.Next() {
		var st record.SkillState
		var enabled int
		var by string
		var at int64
		if err := rows.Scan(&st.Name, &st.Digest, &enabled, &by, &at); err != nil {
			return nil, fmt.Errorf("sqlite: skill states: %w", err)
		}
		st.Enabled, st.By, st.At = enabled != 0, core.Identity(by), fromNanos(at)
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: skill states: %w", err)
	}
	return out, nil
}
