package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// AddWebLink stores a sign-in link, forgetting the expired ones.
func (db *DB) AddWebLink(ctx context.Context, l record.WebLink) error {
	return db.inTx(ctx, "add web link", durable, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_links WHERE expires <= ?`, nanos(db.now())); err != nil {
			return fmt.Errorf("sqlite: add web link: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO web_links (hash, identity, created, expires) VALUES (?, ?, ?, ?)`,
			l.Hash, string(l.Identity), nanos(l.Created), nanos(l.Expires)); err != nil {
			return fmt.Errorf("sqlite: add web link: %w", err)
		}
		return nil
	})
}

// UseWebLink consumes the unexpired link hash: one caller gets it.
func (db *DB) UseWebLink(ctx context.Context, hash string) (record.WebLink, error) {
	var l record.WebLink
	err := db.inTx(ctx, "use web link", durable, func(tx *sql.Tx) error {
		var id string
		var created, expires int64
		err := tx.QueryRowContext(ctx, `DELETE FROM web_links WHERE hash = ? RETURNING identity, created, expires`, hash).
			Scan(&id, &created, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return record.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("sqlite: use web link: %w", err)
		}
		l = record.WebLink{Hash: hash, Identity: core.Identity(id), Created: fromNanos(created), Expires: fromNanos(expires)}
		return nil
	})
	if err != nil {
		return record.WebLink{}, err
	}
	if !db.now().Before(l.Expires) {
		return record.WebLink{}, record.ErrNotFound
	}
	return l, nil
}

// AddWebSession stores a session, forgetting the expired ones.
func (db *DB) AddWebSession(ctx context.Context, s record.WebSession) error {
	return db.inTx(ctx, "add web session", durable, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires <= ?`, nanos(db.now())); err != nil {
			return fmt.Errorf("sqlite: add web session: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO web_sessions (hash, identity, created, expires) VALUES (?, ?, ?, ?)`,
			s.Hash, string(s.Identity), nanos(s.Created), nanos(s.Expires)); err != nil {
			return fmt.Errorf("sqlite: add web session: %w", err)
		}
		return nil
	})
}

// WebSession returns the unexpired session hash.
func (db *DB) WebSession(ctx context.Context, hash string) (record.WebSession, error) {
	var id string
	var created, expires int64
	err := db.queryRow(ctx, `SELECT identity, created, expires FROM web_sessions WHERE hash = ? AND expires > ?`,
		hash, nanos(db.now())).Scan(&id, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return record.WebSession{}, record.ErrNotFound
	}
	if err != nil {
		return record.WebSession{}, fmt.Errorf("sqlite: web session: %w", err)
	}
	return record.WebSession{Hash: hash, Identity: core.Identity(id), Created: fromNanos(created), Expires: fromNanos(expires)}, nil
}

// EndWebSession ends the session hash.
func (db *DB) EndWebSession(ctx context.Context, hash string) error {
	if _, err := db.exec(ctx, `DELETE FROM web_sessions WHERE hash = ?`, hash); err != nil {
		return fmt.Errorf("sqlite: end web session: %w", err)
	}
	return nil
}

// EndWebSessions ends every session of id and counts the live ones.
func (db *DB) EndWebSessions(ctx context.Context, id core.Identity) (int, error) {
	var n int
	err := db.inTx(ctx, "end web sessions", durable, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM web_sessions WHERE identity = ? AND expires > ?`,
			string(id), nanos(db.now())).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: end web sessions: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE identity = ?`, string(id)); err != nil {
			return fmt.Errorf("sqlite: end web sessions: %w", err)
		}
		return nil
	})
	return n, err
}

// ActiveConversations lists the conversations with messages since, the
// latest first.
func (db *DB) ActiveConversations(ctx context.Context, since time.Time, limit int) ([]record.Activity, error) {
	rows, err := db.query(ctx, `SELECT conv, max(created) AS last FROM messages WHERE created >= ?
		GROUP BY conv ORDER BY last DESC LIMIT ?`, nanos(since), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: active conversations: %w", err)
	}
	defer rows.Close()
	var out []record.Activity
	for rows.Next() {
		var a record.Activity
		var last int64
		if err := rows.Scan(&a.Conv, &last); err != nil {
			return nil, fmt.Errorf("sqlite: active conversations: %w", err)
		}
		a.Last = fromNanos(last)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: active conversations: %w", err)
	}
	return out, nil
}
