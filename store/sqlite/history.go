package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// maxRowsPerInsert keeps one INSERT's parameters (6 a row) well below
// SQLite's limit.
const maxRowsPerInsert = 500

// maxPreparedRows is the most rows an INSERT kept prepared has: a turn
// appends one to a few messages; longer appends are rare and each count
// would be a statement of its own.
const maxPreparedRows = 8

// Append stores the messages at the end of the conversation, atomically.
// Older messages are kept (for the audit) until Prune removes them.
func (db *DB) Append(ctx context.Context, conv string, msgs ...llm.Message) error {
	if len(msgs) <= maxRowsPerInsert {
		// One statement is atomic on its own: no BEGIN/COMMIT round trip.
		return db.insertMessages(ctx, nil, conv, msgs)
	}
	return db.inTx(ctx, "append history", relaxed, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(msgs, maxRowsPerInsert) {
			if err := db.insertMessages(ctx, tx, conv, chunk); err != nil {
				return err
			}
		}
		return nil
	})
}

// Reset deletes the conversation's messages: /reset forgets them, in the
// database too, not only from what the model is sent.
func (db *DB) Reset(ctx context.Context, conv string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM messages WHERE conv = ?`, conv); err != nil {
		return fmt.Errorf("sqlite: reset history: %w", err)
	}
	return nil
}

// Replace makes msgs the conversation's whole history in one transaction:
// the older messages are deleted, msgs inserted in order.
func (db *DB) Replace(ctx context.Context, conv string, msgs []llm.Message) error {
	return db.inTx(ctx, "replace history", relaxed, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE conv = ?`, conv); err != nil {
			return fmt.Errorf("sqlite: replace history: %w", err)
		}
		for chunk := range slices.Chunk(msgs, maxRowsPerInsert) {
			if err := db.insertMessages(ctx, tx, conv, chunk); err != nil {
				return err
			}
		}
		return nil
	})
}

// insertMessages appends msgs with one multi-row INSERT, in tx or, when tx
// is nil, on its own (prepared: one or two rows is the common case).
func (db *DB) insertMessages(ctx context.Context, tx *sql.Tx, conv string, msgs []llm.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	created := nanos(db.now())
	args := make([]any, 0, 6*len(msgs))
	for _, m := range msgs {
		calls, err := encodeCalls(m.ToolCalls)
		if err != nil {
			return err
		}
		args = append(args, conv, m.Role, m.Content, calls, m.ToolCallID, created)
	}
	query := insertQuery(len(msgs))
	var err error
	switch {
	case tx != nil:
		_, err = tx.ExecContext(ctx, query, args...)
	case len(msgs) <= maxPreparedRows:
		_, err = db.exec(ctx, query, args...)
	default:
		_, err = db.w.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return fmt.Errorf("sqlite: append history: %w", err)
	}
	return nil
}

// insertQuery inserts n messages; the texts kept prepared are built once.
func insertQuery(n int) string {
	if n <= maxPreparedRows {
		return insertQueries[n]
	}
	return buildInsert(n)
}

var insertQueries = func() (q [maxPreparedRows + 1]string) {
	for n := 1; n <= maxPreparedRows; n++ {
		q[n] = buildInsert(n)
	}
	return q
}()

func buildInsert(n int) string {
	return `INSERT INTO messages (conv, role, content, tool_calls, tool_call_id, created) VALUES ` +
		strings.Repeat("(?, ?, ?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?, ?, ?)"
}

// loadQuery selects what Load needs: the conversation's newest ?2
// messages, or everything from its newest user message (?3) on when that
// is more — a turn longer than the limit must keep the user message that
// started it (see llm.Trim). Without any user message only the newest ?2
// are read: llm.Trim drops them all anyway. Both inner lookups walk the
// (conv, id) index from the end.
const loadQuery = `SELECT role, content, tool_calls, tool_call_id
	FROM messages
	WHERE conv = ?1 AND id >= MIN(
		COALESCE((SELECT id FROM messages WHERE conv = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2 - 1), 0),
		COALESCE((SELECT id FROM messages WHERE conv = ?1 AND role = ?3 ORDER BY id DESC LIMIT 1), 9223372036854775807))
	ORDER BY id`

// Load returns the conversation's newest Options.History messages, or its
// whole turn in progress when that is longer, trimmed with llm.Trim so the
// sequence starts at a user message.
//
// It reads on the writer connection, not the read pool: SQLite drops a WAL
// connection's whole page cache when it finds that another connection
// committed since its last read, so a reader loading after each turn's
// writes read every page again from the files (about 10 system calls a
// message), where the writer's cache holds the pages it just wrote. A
// load waits for a write in progress (each is short).
func (db *DB) Load(ctx context.Context, conv string) ([]llm.Message, error) {
	rows, err := db.queryWriter(ctx, loadQuery, conv, db.opts.History, llm.RoleUser)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load history: %w", err)
	}
	defer rows.Close()
	msgs := make([]llm.Message, 0, db.opts.History)
	for rows.Next() {
		var m llm.Message
		var calls sql.NullString
		if err := rows.Scan(&m.Role, &m.Content, &calls, &m.ToolCallID); err != nil {
			return nil, fmt.Errorf("sqlite: load history: %w", err)
		}
		if m.ToolCalls, err = decodeCalls(calls); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load history: %w", err)
	}
	return llm.Trim(msgs, db.opts.History), nil
}

func encodeCalls(calls []llm.ToolCall) (sql.NullString, error) {
	if len(calls) == 0 {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(calls)
	if err != nil {
		return sql.NullString{}, fmt.Errorf("sqlite: encode tool calls: %w", err)
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

func decodeCalls(s sql.NullString) ([]llm.ToolCall, error) {
	if !s.Valid {
		return nil, nil
	}
	var calls []llm.ToolCall
	if err := json.Unmarshal([]byte(s.String), &calls); err != nil {
		return nil, fmt.Errorf("sqlite: decode tool calls: %w", err)
	}
	return calls, nil
}
