package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// maxRowsPerInsert keeps one INSERT's parameters (7 a row) well below
// PostgreSQL's limit of 65535.
const maxRowsPerInsert = 500

// Append stores the messages at the end of the conversation, atomically;
// those of a journaled turn (ctx carries core.JournalEntry) name its inbox
// entry, which records the turn's stage (inbox_stage.go).
// Older messages are kept (for the audit) until Prune removes them.
func (db *DB) Append(ctx context.Context, conv string, msgs ...llm.Message) error {
	if len(msgs) <= maxRowsPerInsert {
		return insertMessages(ctx, db.pool, db.now, conv, journalEntry(ctx), msgs) // one statement is atomic
	}
	entry := journalEntry(ctx)
	return unreachable(ctx, pgq.BeginFunc(ctx, db.pool, func(tx pgq.Tx) error {
		for chunk := range slices.Chunk(msgs, maxRowsPerInsert) {
			if err := insertMessages(ctx, tx, db.now, conv, entry, chunk); err != nil {
				return err
			}
		}
		return nil
	}))
}

// Reset deletes the conversation's messages, having frozen the stages
// they show into its pending inbox entries (one statement).
func (db *DB) Reset(ctx context.Context, conv string) error {
	if _, err := db.pool.Exec(ctx, `WITH frozen AS (`+freezeStagesSQL+`) DELETE FROM messages WHERE conv = $1`, conv); err != nil {
		return fmt.Errorf("postgres: reset history: %w", err)
	}
	return nil
}

// Replace makes msgs the conversation's whole history in one transaction
// (the stages the old rows show frozen first, as Reset does; the new rows
// name no inbox entry).
func (db *DB) Replace(ctx context.Context, conv string, msgs []llm.Message) error {
	return pgq.BeginFunc(ctx, db.pool, func(tx pgq.Tx) error {
		if _, err := tx.Exec(ctx, `WITH frozen AS (`+freezeStagesSQL+`) DELETE FROM messages WHERE conv = $1`, conv); err != nil {
			return fmt.Errorf("postgres: replace history: %w", err)
		}
		for chunk := range slices.Chunk(msgs, maxRowsPerInsert) {
			if err := insertMessages(ctx, tx, db.now, conv, nil, chunk); err != nil {
				return err
			}
		}
		return nil
	})
}

// execer is what the pool and a transaction share for writing.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// insertMessages appends msgs with one multi-row INSERT, naming the inbox
// entry whose turn writes them (nil: none).
func insertMessages(ctx context.Context, q execer, now func() time.Time, conv string, entry *int64, msgs []llm.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	created := nanos(now())
	const perRow = 7
	args := make([]any, 0, perRow*len(msgs))
	var values strings.Builder
	for i, m := range msgs {
		calls, err := encodeCalls(m.ToolCalls)
		if err != nil {
			return err
		}
		args = append(args, conv, string(m.Role), m.Content, calls, m.ToolCallID, created, entry)
		if i > 0 {
			values.WriteString(", ")
		}
		values.WriteString("(")
		for j := range perRow {
			if j > 0 {
				values.WriteString(", ")
			}
			values.WriteString("$" + strconv.Itoa(perRow*i+j+1))
		}
		values.WriteString(")")
	}
	_, err := q.Exec(ctx, `INSERT INTO messages (conv, role, content, tool_calls, tool_call_id, created, inbox_id) VALUES `+
		values.String(), args...)
	if err != nil {
		return fmt.Errorf("postgres: append history: %w", unreachable(ctx, err))
	}
	return nil
}

// loadQuery selects what Load needs: the conversation's newest $2
// messages, or everything from its newest user message ($3) on when that
// is more — a turn longer than the limit must keep the user message that
// started it (see llm.Trim). Both inner lookups walk the (conv, id) index
// from the end.
const loadQuery = `SELECT role, content, tool_calls, tool_call_id
	FROM messages
	WHERE conv = $1 AND id >= LEAST(
		COALESCE((SELECT id FROM messages WHERE conv = $1 ORDER BY id DESC LIMIT 1 OFFSET $2::bigint - 1), 0),
		COALESCE((SELECT id FROM messages WHERE conv = $1 AND role = $3 ORDER BY id DESC LIMIT 1), 9223372036854775807))
	ORDER BY id`

// Load returns the conversation's newest Options.History messages, or its
// whole turn in progress when that is longer, trimmed with llm.Trim so the
// sequence starts at a user message.
func (db *DB) Load(ctx context.Context, conv string) ([]llm.Message, error) {
	rows, err := db.pool.Query(ctx, loadQuery, conv, int64(db.opts.History), string(llm.RoleUser))
	if err != nil {
		return nil, fmt.Errorf("postgres: load history: %w", unreachable(ctx, err))
	}
	msgs, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (llm.Message, error) {
		var m llm.Message
		var role string
		var calls *string
		if err := r.Scan(&role, &m.Content, &calls, &m.ToolCallID); err != nil {
			return m, err
		}
		m.Role = llm.Role(role)
		var err error
		m.ToolCalls, err = decodeCalls(calls)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: load history: %w", unreachable(ctx, err))
	}
	return llm.Trim(msgs, db.opts.History), nil
}

// encodeCalls is the tool_calls column: a JSON array, NULL when none.
func encodeCalls(calls []llm.ToolCall) (*string, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(calls)
	if err != nil {
		return nil, fmt.Errorf("postgres: encode tool calls: %w", err)
	}
	s := string(b)
	return &s, nil
}

func decodeCalls(s *string) ([]llm.ToolCall, error) {
	if s == nil {
		return nil, nil
	}
	var calls []llm.ToolCall
	if err := json.Unmarshal([]byte(*s), &calls); err != nil {
		return nil, fmt.Errorf("decode tool calls: %w", err)
	}
	return calls, nil
}
