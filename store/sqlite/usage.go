package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// dayKey is the UTC calendar day of t, the aggregation key of usage.
func dayKey(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// AddUsage adds u to the conversation's usage of the current UTC day.
func (db *DB) AddUsage(ctx context.Context, conv string, u llm.Usage) error {
	_, err := db.w.ExecContext(ctx, `INSERT INTO usage (conv, day, prompt_tokens, completion_tokens)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (conv, day) DO UPDATE SET
			prompt_tokens = prompt_tokens + excluded.prompt_tokens,
			completion_tokens = completion_tokens + excluded.completion_tokens`,
		conv, dayKey(db.now()), u.PromptTokens, u.CompletionTokens)
	if err != nil {
		return fmt.Errorf("sqlite: add usage: %w", err)
	}
	return nil
}

// Usage returns the conversation's usage on the UTC day containing day.
func (db *DB) Usage(ctx context.Context, conv string, day time.Time) (llm.Usage, error) {
	var u llm.Usage
	err := db.r.QueryRowContext(ctx, `SELECT prompt_tokens, completion_tokens
		FROM usage WHERE conv = ? AND day = ?`, conv, dayKey(day)).Scan(&u.PromptTokens, &u.CompletionTokens)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return llm.Usage{}, fmt.Errorf("sqlite: usage: %w", err)
	}
	return u, nil
}
