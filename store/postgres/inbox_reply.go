package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-bot/gatehouse/store"
)

var _ store.InboxReplies = (*DB)(nil)

// SetInboxReply records the stage and reply text of a turn holder's live
// claim runs, in one UPDATE.
func (db *DB) SetInboxReply(ctx context.Context, id int64, holder string, stage int, text string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE inbox SET stage = $1, reply = $5
		WHERE id = $2 AND holder = $3 AND claimed = 1 AND done = 0 AND expires > $4`,
		stage, id, holder, nanos(db.now()), text)
	if err != nil {
		return fmt.Errorf("postgres: inbox entry %d reply: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: inbox entry %d reply: %w", id, store.ErrNotHeld)
	}
	return nil
}

// InboxReply returns the reply text recorded for entry id.
func (db *DB) InboxReply(ctx context.Context, id int64) (string, error) {
	var text string
	err := db.pool.QueryRow(ctx, `SELECT reply FROM inbox WHERE id = $1`, id).Scan(&text)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("postgres: inbox entry %d reply: %w", id, err)
	}
	return text, nil
}
