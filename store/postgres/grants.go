package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

const grantColumns = `id, tool, args, conv, granted_by, granted, expires, files`

// callKey is the key of a grant's call: the hex SHA-256 of tool, NUL,
// args (arguments may be too long for an index entry).
func callKey(tool, args string) string {
	h := sha256.Sum256([]byte(tool + "\x00" + args))
	return hex.EncodeToString(h[:])
}

// AddGrant stores g under a number drawn from the standing allows'
// sequence (the column's default), or replaces the grant of the same
// call, conversation and granter under its number, in one statement.
func (db *DB) AddGrant(ctx context.Context, g record.Grant) (record.Grant, error) {
	if g.Tool == "" || g.Conv == "" || g.GrantedBy == "" {
		return record.Grant{}, errors.New("postgres: add grant: empty tool, conversation or granter")
	}
	files, err := json.Marshal(g.Files)
	if err != nil {
		return record.Grant{}, fmt.Errorf("postgres: add grant: files: %w", err)
	}
	out, err := scanGrant(db.pool.QueryRow(ctx, `INSERT INTO grants (tool, args, call, conv, granted_by, granted, expires, files)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (conv, call, granted_by) DO UPDATE SET
		granted = excluded.granted, expires = excluded.expires, files = excluded.files
		RETURNING `+grantColumns,
		g.Tool, g.Args, callKey(g.Tool, g.Args), g.Conv, string(g.GrantedBy), nanos(g.Granted), nanos(g.Expires), string(files)))
	if err != nil {
		return record.Grant{}, fmt.Errorf("postgres: add grant: %w", err)
	}
	return out, nil
}

// Grants lists the grants not expired at now, in ID order.
func (db *DB) Grants(ctx context.Context, now time.Time) ([]record.Grant, error) {
	return db.queryGrants(ctx, "grants", `SELECT `+grantColumns+` FROM grants WHERE expires > $1 ORDER BY id`, nanos(now))
}

// GrantsFor lists the grants of tool with exactly args in conv not
// expired at now, in ID order.
func (db *DB) GrantsFor(ctx context.Context, tool, args, conv string, now time.Time) ([]record.Grant, error) {
	return db.queryGrants(ctx, "grants for "+tool, `SELECT `+grantColumns+` FROM grants
		WHERE conv = $1 AND call = $2 AND tool = $3 AND args = $4 AND expires > $5 ORDER BY id`,
		conv, callKey(tool, args), tool, args, nanos(now))
}

// RemoveGrant deletes the grant with the ID and returns it, or
// record.ErrNotFound.
func (db *DB) RemoveGrant(ctx context.Context, id int64) (record.Grant, error) {
	g, err := scanGrant(db.pool.QueryRow(ctx, `DELETE FROM grants WHERE id = $1 RETURNING `+grantColumns, id))
	if errors.Is(err, pgq.ErrNoRows) {
		return record.Grant{}, record.ErrNotFound
	}
	if err != nil {
		return record.Grant{}, fmt.Errorf("postgres: remove grant: %w", err)
	}
	return g, nil
}

// ExpireGrants deletes the grants expired at now and returns them: of
// instances sweeping at once, each row is returned to the one whose
// DELETE took it.
func (db *DB) ExpireGrants(ctx context.Context, now time.Time) ([]record.Grant, error) {
	return db.queryGrants(ctx, "expire grants", `DELETE FROM grants WHERE expires <= $1 RETURNING `+grantColumns, nanos(now))
}

// queryGrants runs a query returning grants.
func (db *DB) queryGrants(ctx context.Context, what, query string, args ...any) ([]record.Grant, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (record.Grant, error) { return scanGrant(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return out, nil
}

func scanGrant(row pgq.Row) (record.Grant, error) {
	var g record.Grant
	var grantedBy, files string
	var granted, expires int64
	if err := row.Scan(&g.ID, &g.Tool, &g.Args, &g.Conv, &grantedBy, &granted, &expires, &files); err != nil {
		return record.Grant{}, err
	}
	g.GrantedBy, g.Granted, g.Expires = core.Identity(grantedBy), fromNanos(granted), fromNanos(expires)
	if err := json.Unmarshal([]byte(files), &g.Files); err != nil {
		return record.Grant{}, fmt.Errorf("grant #%d: files: %w", g.ID, err)
	}
	if g.Files == nil {
		g.Files = map[string]string{}
	}
	return g, nil
}
