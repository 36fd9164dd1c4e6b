package postgres

import (
	"context"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// inboxReset is the inbox's cancel value of an entry whose turn /reset
// asked its holder to stop keeping nothing of it (1 is /cancel's).
const inboxReset = 2

var _ store.InboxResetter = (*DB)(nil)

// ResetInbox marks conv's entries live-claimed by instances other than
// holder as reset and deletes conv's history, in one transaction: the
// marked rows stay locked until the history is gone, so a marked turn
// cannot be finished (and the next one claimed) in between. The
// notification goes out at commit.
func (db *DB) ResetInbox(ctx context.Context, conv, holder string) (bool, error) {
	marked := false
	err := pgq.BeginFunc(ctx, db.pool, func(tx pgq.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE inbox SET cancel = $1
			WHERE conv = $2 AND done = 0 AND ((holder <> $3 AND claimed = 1 AND expires > $4) OR
				(holder = '' AND claimed = 0 AND EXISTS (SELECT 1 FROM inbox p
					WHERE p.next = inbox.id AND p.holder <> $3 AND `+handLive("p", "$4")+`)))`,
			inboxReset, conv, holder, nanos(db.now()))
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `WITH frozen AS (`+freezeStagesSQL+`) DELETE FROM messages WHERE conv = $1`, conv); err != nil {
			return err
		}
		if marked = tag.RowsAffected() > 0; marked {
			if _, err := tx.Exec(ctx, `SELECT pg_notify('`+inboxChannel+`', '`+store.InboxCancel+`')`); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("postgres: reset %s: %w", conv, err)
	}
	return marked, nil
}

// InboxResets returns those of ids that ResetInbox marked and that are
// not done.
func (db *DB) InboxResets(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id FROM inbox WHERE id = ANY($1) AND cancel = $2 AND done = 0 ORDER BY id`,
		ids, inboxReset)
	if err != nil {
		return nil, fmt.Errorf("postgres: reset inbox entries: %w", err)
	}
	got, err := pgq.CollectRows(rows, pgq.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("postgres: reset inbox entries: %w", err)
	}
	return got, nil
}
