package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// AddWebLink stores a sign-in link, forgetting the expired ones.
func (db *DB) AddWebLink(ctx context.Context, l record.WebLink) error {
	if _, err := db.pool.Exec(ctx, `WITH gone AS (DELETE FROM web_links WHERE expires <= $5)
		INSERT INTO web_links (hash, identity, created, expires) VALUES ($1, $2, $3, $4)`,
		l.Hash, string(l.Identity), nanos(l.Created), nanos(l.Expires), nanos(db.now())); err != nil {
		return fmt.Errorf("postgres: add web link: %w", err)
	}
	return nil
}

// UseWebLink consumes the unexpired link hash in one DELETE … RETURNING:
// of concurrent callers on any instance, one gets it.
func (db *DB) UseWebLink(ctx context.Context, hash string) (record.WebLink, error) {
	var id string
	var created, expires int64
	err := db.pool.QueryRow(ctx, `DELETE FROM web_links WHERE hash = $1 RETURNING identity, created, expires`, hash).
		Scan(&id, &created, &expires)
	if errors.Is(err, pgq.ErrNoRows) {
		return record.WebLink{}, record.ErrNotFound
	}
	if err != nil {
		return record.WebLink{}, fmt.Errorf("postgres: use web link: %w", err)
	}
	l := record.WebLink{Hash: hash, Identity: core.Identity(id), Created: fromNanos(created), Expires: fromNanos(expires)}
	if !db.now().Before(l.Expires) {
		return record.WebLink{}, record.ErrNotFound
	}
	return l, nil
}

// AddWebSession stores a session, forgetting the expired ones.
func (db *DB) AddWebSession(ctx context.Context, s record.WebSession) error {
	if _, err := db.pool.Exec(ctx, `WITH gone AS (DELETE FROM web_sessions WHERE expires <= $5)
		INSERT INTO web_sessions (hash, identity, created, expires) VALUES ($1, $2, $3, $4)`,
		s.Hash, string(s.Identity), nanos(s.Created), nanos(s.Expires), nanos(db.now())); err != nil {
		return fmt.Errorf("postgres: add web session: %w", err)
	}
	return nil
}

// WebSession returns the unexpired session hash.
func (db *DB) WebSession(ctx context.Context, hash string) (record.WebSession, error) {
	var id string
	var created, expires int64
	err := db.pool.QueryRow(ctx, `SELECT identity, created, expires FROM web_sessions WHERE hash = $1 AND expires > $2`,
		hash, nanos(db.now())).Scan(&id, &created, &expires)
	if errors.Is(err, pgq.ErrNoRows) {
		return record.WebSession{}, record.ErrNotFound
	}
	if err != nil {
		return record.WebSession{}, fmt.Errorf("postgres: web session: %w", err)
	}
	return record.WebSession{Hash: hash, Identity: core.Identity(id), Created: fromNanos(created), Expires: fromNanos(expires)}, nil
}

// EndWebSession ends the session hash.
func (db *DB) EndWebSession(ctx context.Context, hash string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM web_sessions WHERE hash = $1`, hash); err != nil {
		return fmt.Errorf("postgres: end web session: %w", err)
	}
	return nil
}

// EndWebSessions ends every session of id and counts the live ones.
func (db *DB) EndWebSessions(ctx context.Context, id core.Identity) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `WITH del AS (DELETE FROM web_sessions WHERE identity = $1 RETURNING expires)
		SELECT count(*) FROM del WHERE expires > $2`, string(id), nanos(db.now())).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: end web sessions: %w", err)
	}
	return n, nil
}

// ActiveConversations lists the conversations with messages since, the
// latest first.
func (db *DB) ActiveConversations(ctx context.Context, since time.Time, limit int) ([]record.Activity, error) {
	rows, err := db.pool.Query(ctx, `SELECT conv, max(created) AS last FROM messages WHERE created >= $1
		GROUP BY conv ORDER BY last DESC LIMIT $2`, nanos(since), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: active conversations: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (record.Activity, error) {
		var a record.Activity
		var last int64
		err := r.Scan(&a.Conv, &last)
		a.Last = fromNanos(last)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: active conversations: %w", err)
	}
	return out, nil
}
