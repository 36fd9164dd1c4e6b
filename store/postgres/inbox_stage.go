package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// A journaled turn's stage is kept in two places, so that the stages the
// history shows cost no write to the inbox row: the row's stage column,
// written only when the history does not show the stage recorded, and
// the history rows the turn wrote, which name their inbox entry
// (messages.inbox_id, from core.JournalEntry on the Append's context).
// The newest of those rows says how far the turn got: a final reply
// (the assistant's, without tool calls) is StageReplied with that reply
// as the recorded text, anything else StageInHistory. The stage a
// takeover reads is the greater of the two. A statement that deletes
// history rows (Reset, Replace, /reset) first freezes the stage they show
// into the inbox rows of pending entries (freezeStagesSQL).

// The stages of core.TurnStage, as the store keeps them.
const (
	stageInHistory = int(core.StageInHistory)
	stageReplied   = int(core.StageReplied)
)

var _ store.InboxReplies = (*DB)(nil)

// finalAnswer is the condition that the history row m is a turn's final
// answer: the assistant's, without tool calls.
var finalAnswer = `m.role = '` + string(llm.RoleAssistant) + `' AND m.tool_calls IS NULL`

// seenStage is the stage the history shows for the inbox entry whose id
// is the column ref: 0 when none of its rows names it.
func seenStage(ref string) string {
	return `COALESCE((SELECT CASE WHEN ` + finalAnswer + `
		THEN ` + fmt.Sprint(stageReplied) + ` ELSE ` + fmt.Sprint(stageInHistory) + ` END
		FROM messages m WHERE m.inbox_id = ` + ref + ` ORDER BY m.id DESC LIMIT 1), 0)`
}

// seenReply is the final reply the history shows for the inbox entry
// whose id is the column ref, empty when it shows none.
func seenReply(ref string) string {
	return `COALESCE((SELECT CASE WHEN ` + finalAnswer + `
		THEN m.content ELSE '' END
		FROM messages m WHERE m.inbox_id = ` + ref + ` ORDER BY m.id DESC LIMIT 1), '')`
}

// effectiveStage is the stage of the inbox row tbl (a table name or
// alias): the greater of its stage column and what the history shows.
func effectiveStage(tbl string) string {
	return `GREATEST(` + tbl + `.stage, ` + seenStage(tbl+`.id`) + `)`
}

// effectiveReply is the reply text recorded for the inbox row tbl: its
// reply column when a reply was written there, else the final reply the
// history shows.
func effectiveReply(tbl string) string {
	return `CASE WHEN ` + tbl + `.reply <> '' THEN ` + tbl + `.reply
		ELSE ` + seenReply(tbl+`.id`) + ` END`
}

// heldBy is the condition that holder's claim of the inbox row tbl is
// live, in its own row or in the done row that took it ($2 the id, $3
// the holder, $4 now).
func heldBy(tbl string) string {
	return tbl + `.id = $2 AND ` + tbl + `.done = 0 AND ((` + tbl + `.holder = $3 AND ` + tbl + `.claimed = 1 AND ` + tbl + `.expires > $4) OR ` +
		handedTo(tbl, "$3", "$4") + `)`
}

// SetInboxStage records the stage of a turn holder's live claim runs. The
// row is written only when its stage as a takeover would read it differs
// (a user's message appended to the history under the entry's id is
// StageInHistory already); either way the claim is checked.
func (db *DB) SetInboxStage(ctx context.Context, id int64, holder string, stage int) error {
	var held, wrote int
	err := db.pool.QueryRow(ctx, `WITH e AS (SELECT `+effectiveStage("i")+` AS eff FROM inbox i WHERE `+heldBy("i")+`),
		up AS (UPDATE inbox SET stage = $1 WHERE `+heldBy("inbox")+` AND (SELECT eff FROM e) <> $1 RETURNING 1)
		SELECT (SELECT count(*) FROM e WHERE eff = $1), (SELECT count(*) FROM up)`,
		stage, id, holder, nanos(db.now())).Scan(&held, &wrote)
	if err != nil {
		return fmt.Errorf("postgres: inbox entry %d stage: %w", id, err)
	}
	if held == 0 && wrote == 0 {
		return fmt.Errorf("postgres: inbox entry %d stage: %w", id, store.ErrNotHeld)
	}
	return nil
}

// SetInboxReply records the stage and reply text of a turn holder's live
// claim runs, in one UPDATE, unless the history shows them already (the
// turn's final reply appended under the entry's id, with that text);
// either way the claim is checked.
func (db *DB) SetInboxReply(ctx context.Context, id int64, holder string, stage int, text string) error {
	var held, wrote int
	err := db.pool.QueryRow(ctx, `WITH e AS (SELECT `+effectiveStage("i")+` = $1 AND `+effectiveReply("i")+` = $5 AS shown
			FROM inbox i WHERE `+heldBy("i")+`),
		up AS (UPDATE inbox SET stage = $1, reply = $5 WHERE `+heldBy("inbox")+` AND NOT (SELECT shown FROM e) RETURNING 1)
		SELECT (SELECT count(*) FROM e WHERE shown), (SELECT count(*) FROM up)`,
		stage, id, holder, nanos(db.now()), text).Scan(&held, &wrote)
	if err != nil {
		return fmt.Errorf("postgres: inbox entry %d reply: %w", id, err)
	}
	if held == 0 && wrote == 0 {
		return fmt.Errorf("postgres: inbox entry %d reply: %w", id, store.ErrNotHeld)
	}
	return nil
}

// InboxReply returns the reply text recorded for entry id.
func (db *DB) InboxReply(ctx context.Context, id int64) (string, error) {
	var text string
	err := db.pool.QueryRow(ctx, `SELECT `+effectiveReply("i")+` FROM inbox i WHERE i.id = $1`, id).Scan(&text)
	if errors.Is(err, pgq.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("postgres: inbox entry %d reply: %w", id, err)
	}
	return text, nil
}

// freezeStagesSQL is the statement that writes into the pending inbox
// entries of conv ($1) the stage (and reply) their history rows show
// where it is past their stage column: run before those rows are deleted
// (in the same transaction, or as a CTE of the DELETE, whose snapshot it
// shares), so that a takeover reads the stage the turn had reached.
var freezeStagesSQL = `UPDATE inbox i SET stage = s.seen,
		reply = CASE WHEN s.seen = ` + fmt.Sprint(stageReplied) + ` THEN s.content ELSE i.reply END
	FROM (SELECT DISTINCT ON (m.inbox_id) m.inbox_id AS id,
			CASE WHEN ` + finalAnswer + `
			THEN ` + fmt.Sprint(stageReplied) + ` ELSE ` + fmt.Sprint(stageInHistory) + ` END AS seen, m.content
		FROM messages m WHERE m.conv = $1 AND m.inbox_id IS NOT NULL ORDER BY m.inbox_id, m.id DESC) s
	WHERE i.id = s.id AND i.done = 0 AND i.stage < s.seen`

// journalEntry is the inbox entry a history write is for, NULL when ctx
// carries none.
func journalEntry(ctx context.Context) *int64 {
	if id, ok := core.JournalEntry(ctx); ok {
		return &id
	}
	return nil
}

var _ store.InboxClaimer = (*DB)(nil)

// putLock is the class of the advisory locks that serialise the puts of
// one conversation (pg_advisory_xact_lock(putLock, hashtext(conv))).
const putLock = 0x6962 // "ib"

// PutClaimInbox writes e and claims it for e.Receiver when its
// conversation has no pending entry, in one transaction (one round
// trip): an advisory lock on the conversation serialises its puts, so
// two receivers never both find it empty; a claimer cannot take an entry
// put claimed, and one that finishes the conversation's last entry
// meanwhile only makes this one wait for a claim. An entry put claimed
// wakes nobody (its receiver runs it); one left pending wakes the
// instances as PutInbox does.
func (db *DB) PutClaimInbox(ctx context.Context, e store.InboxEntry, reserve, ttl time.Duration) (int64, bool, bool, error) {
	if ttl <= 0 {
		return 0, false, false, fmt.Errorf("postgres: put inbox entry of %s: ttl %v is not positive", e.Conv, ttl)
	}
	now := db.now()
	reserved := int64(0)
	if reserve > 0 {
		reserved = nanos(now.Add(reserve))
	}
	// One batch is one implicit transaction: the lock is held until the
	// insert commits. The batch bypasses textPool: its text is made
	// storable here.
	b := &pgq.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, storableArgs([]any{putLock, e.Conv})...)
	b.Queue(`WITH head AS (SELECT NOT EXISTS (SELECT 1 FROM inbox WHERE conv = $3 AND done = 0) AS free),
		ins AS (INSERT INTO inbox (gateway, msg_key, conv, data, files, receiver, received, holder, claimed, expires)
			SELECT $1, $2, $3, $4, $5, $6, $7,
				CASE WHEN head.free OR $8::bigint > 0 THEN $6 ELSE '' END,
				CASE WHEN head.free THEN 1 ELSE 0 END,
				CASE WHEN head.free THEN $9::bigint ELSE $8::bigint END
			FROM head
			ON CONFLICT (gateway, msg_key) DO NOTHING RETURNING id, claimed = 1 AS claimed)
		SELECT ins.id, ins.claimed FROM ins
			LEFT JOIN LATERAL (SELECT pg_notify('`+inboxChannel+`', '') WHERE NOT ins.claimed) woken ON true`,
		storableArgs([]any{e.Gateway, e.Key, e.Conv, e.Data, e.Files, e.Receiver, nanos(now), reserved, nanos(now.Add(ttl))})...)
	var id int64
	var claimed bool
	err := func() error {
		br := db.pool.SendBatch(ctx, b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		if err := br.QueryRow().Scan(&id, &claimed); err != nil {
			return err
		}
		return br.Close()
	}()
	if errors.Is(err, pgq.ErrNoRows) {
		return 0, false, false, nil
	}
	if err != nil {
		return 0, false, false, fmt.Errorf("postgres: put inbox entry of %s: %w", e.Conv, err)
	}
	return id, true, claimed, nil
}
