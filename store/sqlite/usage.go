package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store"
)

// dayKey is the UTC calendar day of t, the aggregation key of usage.
func dayKey(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// AddUsage adds u, its tokens and its cost, to the conversation's usage of
// the current UTC day.
func (db *DB) AddUsage(ctx context.Context, conv string, u llm.Usage) error {
	_, err := db.exec(ctx, `INSERT INTO usage (conv, day, prompt_tokens, completion_tokens, cost_usd)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (conv, day) DO UPDATE SET
			prompt_tokens = prompt_tokens + excluded.prompt_tokens,
			completion_tokens = completion_tokens + excluded.completion_tokens,
			cost_usd = cost_usd + excluded.cost_usd`,
		conv, dayKey(db.now()), u.PromptTokens, u.CompletionTokens, u.CostUSD)
	if err != nil {
		return fmt.Errorf("sqlite: add usage: %w", err)
	}
	return nil
}

// Usage returns the conversation's usage on the UTC day containing day.
func (db *DB) Usage(ctx context.Context, conv string, day time.Time) (llm.Usage, error) {
	var u llm.Usage
	err := db.queryRow(ctx, `SELECT prompt_tokens, completion_tokens, cost_usd
		FROM usage WHERE conv = ? AND day = ?`, conv, dayKey(day)).Scan(&u.PromptTokens, &u.CompletionTokens, &u.CostUSD)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return llm.Usage{}, fmt.Errorf("sqlite: usage: %w", err)
	}
	return u, nil
}

// DayUsage returns the usage of all conversations on the UTC day containing day.
func (db *DB) DayUsage(ctx context.Context, day time.Time) (llm.Usage, error) {
	var u llm.Usage
	err := db.queryRow(ctx, `SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0),
		COALESCE(SUM(cost_usd), 0)
		FROM usage WHERE day = ?`, dayKey(day)).Scan(&u.PromptTokens, &u.CompletionTokens, &u.CostUSD)
	if err != nil {
		return llm.Usage{}, fmt.Errorf("sqlite: day usage: %w", err)
	}
	return u, nil
}

// UsageDays returns each UTC day's total usage from the day containing
// since onwards, oldest first.
func (db *DB) UsageDays(ctx context.Context, since time.Time) ([]store.DayUsage, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT day, SUM(prompt_tokens), SUM(completion_tokens), SUM(cost_usd)
		FROM usage WHERE day >= ? GROUP BY day ORDER BY day`, dayKey(since))
	if err != nil {
		return nil, fmt.Errorf("sqlite: usage days: %w", err)
	}
	defer rows.Close()
	var out []store.DayUsage
	for rows.Next() {
		var d store.DayUsage
		if err := rows.Scan(&d.Day, &d.Usage.PromptTokens, &d.Usage.CompletionTokens, &d.Usage.CostUSD); err != nil {
			return nil, fmt.Errorf("sqlite: usage days: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: usage days: %w", err)
	}
	return out, nil
}
