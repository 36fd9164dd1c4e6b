package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

const grantColumns = `id, tool, args, conv, granted_by, granted, expires, files`

// callKey is the key of a grant's call: the hex SHA-256 of tool, NUL,
// args (arguments may be long).
func callKey(tool, args string) string {
	h := sha256.Sum256([]byte(tool + "\x00" + args))
	return hex.EncodeToString(h[:])
}

// AddGrant stores g under a number drawn from the standing allows'
// sequence, or replaces the grant of the same call, conversation and
// granter under its number.
func (db *DB) AddGrant(ctx context.Context, g record.Grant) (record.Grant, error) {
	if g.Tool == "" || g.Conv == "" || g.GrantedBy == "" {
		return record.Grant{}, errors.New("sqlite: add grant: empty tool, conversation or granter")
	}
	files, err := json.Marshal(g.Files)
	if err != nil {
		return record.Grant{}, fmt.Errorf("sqlite: add grant: files: %w", err)
	}
	key := callKey(g.Tool, g.Args)
	var out record.Grant
	err = db.inTx(ctx, "add grant", durable, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM grants WHERE conv = ? AND call = ? AND granted_by = ?`,
			g.Conv, key, g.GrantedBy).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if id, err = nextRuleNumber(ctx, tx); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("sqlite: add grant: %w", err)
		}
		row := tx.QueryRowContext(ctx, `INSERT INTO grants (id, tool, args, call, conv, granted_by, granted, expires, files)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET
			granted = excluded.granted, expires = excluded.expires, files = excluded.files
			RETURNING `+grantColumns, id, g.Tool, g.Args, key, g.Conv, g.GrantedBy, nanos(g.Granted), nanos(g.Expires), string(files))
		if out, err = scanGrant(row); err != nil {
			return fmt.Errorf("sqlite: add grant: %w", err)
		}
		return nil
	})
	return out, err
}

// nextRuleNumber draws the next number of standing_allows' sequence (its
// AUTOINCREMENT counter in sqlite_sequence) for a grant, so that standing
// allows and grants are numbered in one series and no number is used
// twice, by either.
func nextRuleNumber(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT max(
		coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'standing_allows'), 0),
		coalesce((SELECT max(id) FROM standing_allows), 0),
		coalesce((SELECT max(id) FROM grants), 0)) + 1`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: add grant: number: %w", err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = ? WHERE name = 'standing_allows'`, n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: add grant: number: %w", err)
	}
	if k, err := res.RowsAffected(); err != nil || k == 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) VALUES ('standing_allows', ?)`, n); err != nil {
			return 0, fmt.Errorf("sqlite: add grant: number: %w", err)
		}
	}
	return n, nil
}

// Grants lists the grants not expired at now, in ID order.
func (db *DB) Grants(ctx context.Context, now time.Time) ([]record.Grant, error) {
	return db.queryGrants(ctx, "grants", `SELECT `+grantColumns+` FROM grants WHERE expires > ? ORDER BY id`, nanos(now))
}

// GrantsFor lists the grants of tool with exactly args in conv not
// expired at now, in ID order.
func (db *DB) GrantsFor(ctx context.Context, tool, args, conv string, now time.Time) ([]record.Grant, error) {
	return db.queryGrants(ctx, "grants for "+tool, `SELECT `+grantColumns+` FROM grants
		WHERE conv = ? AND call = ? AND tool = ? AND args = ? AND expires > ? ORDER BY id`,
		conv, callKey(tool, args), tool, args, nanos(now))
}

// queryGrants runs a query of grants on the reader.
func (db *DB) queryGrants(ctx context.Context, what, query string, args ...any) ([]record.Grant, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return collectGrants(rows, what)
}

// collectGrants scans and closes rows.
func collectGrants(rows *sql.Rows, what string) ([]record.Grant, error) {
	defer rows.Close()
	var out []record.Grant
	for rows.Next() {
		g, err := scanGrant(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", what, err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return out, nil
}

// RemoveGrant deletes the grant with the ID and returns it, or
// record.ErrNotFound.
func (db *DB) RemoveGrant(ctx context.Context, id int64) (record.Grant, error) {
	var out record.Grant
	err := db.inTx(ctx, "remove grant", durable, func(tx *sql.Tx) error {
		var err error
		out, err = scanGrant(tx.QueryRowContext(ctx, `DELETE FROM grants WHERE id = ? RETURNING `+grantColumns, id))
		if errors.Is(err, sql.ErrNoRows) {
			return record.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("sqlite: remove grant: %w", err)
		}
		return nil
	})
	return out, err
}

// ExpireGrants deletes the grants expired at now and returns them.
func (db *DB) ExpireGrants(ctx context.Context, now time.Time) ([]record.Grant, error) {
	var out []record.Grant
	err := db.inTx(ctx, "expire grants", durable, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM grants WHERE expires <= ? RETURNING `+grantColumns, nanos(now))
		if err != nil {
			return fmt.Errorf("sqlite: expire grants: %w", err)
		}
		out, err = collectGrants(rows, "expire grants")
		return err
	})
	return out, err
}

func scanGrant(row interface{ Scan(...any) error }) (record.Grant, error) {
	var g record.Grant
	var granted, expires int64
	var files string
	if err := row.Scan(&g.ID, &g.Tool, &g.Args, &g.Conv, &g.GrantedBy, &granted, &expires, &files); err != nil {
		return record.Grant{}, err
	}
	g.Granted, g.Expires = fromNanos(granted), fromNanos(expires)
	if err := json.Unmarshal([]byte(files), &g.Files); err != nil {
		return record.Grant{}, fmt.Errorf("grant #%d: files: %w", g.ID, err)
	}
	if g.Files == nil {
		g.Files = map[string]string{}
	}
	return g, nil
}
