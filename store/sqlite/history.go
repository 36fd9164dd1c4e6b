package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// Append stores the messages at the end of the conversation, atomically.
// Older messages are kept (for the audit) until Prune removes them.
func (db *DB) Append(ctx context.Context, conv string, msgs ...llm.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	created := nanos(db.now())
	return db.inTx(ctx, "append history", func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO messages
			(conv, role, content, tool_calls, tool_call_id, created) VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("sqlite: append history: %w", err)
		}
		defer stmt.Close()
		for _, m := range msgs {
			calls, err := encodeCalls(m.ToolCalls)
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, conv, m.Role, m.Content, calls, m.ToolCallID, created); err != nil {
				return fmt.Errorf("sqlite: append history: %w", err)
			}
		}
		return nil
	})
}

// Load returns the conversation's newest Options.History messages, trimmed
// with llm.Trim so the sequence starts at a user message.
func (db *DB) Load(ctx context.Context, conv string) ([]llm.Message, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT role, content, tool_calls, tool_call_id
		FROM messages WHERE conv = ? ORDER BY id DESC LIMIT ?`, conv, db.opts.History)
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
	slices.Reverse(msgs)
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
