package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/postgres/internal/pgq"
)

// dayKey is the UTC calendar day of t, the aggregation key of usage.
func dayKey(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// AddUsage adds u, its tokens and its cost, to the conversation's usage of
// the current UTC day.
func (db *DB) AddUsage(ctx context.Context, conv string, u llm.Usage) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO usage AS u (conv, day, prompt_tokens, completion_tokens, cost_usd)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (conv, day) DO UPDATE SET
			prompt_tokens = u.prompt_tokens + excluded.prompt_tokens,
			completion_tokens = u.completion_tokens + excluded.completion_tokens,
			cost_usd = u.cost_usd + excluded.cost_usd`,
		conv, dayKey(db.now()), int64(u.PromptTokens), int64(u.CompletionTokens), u.CostUSD)
	if err != nil {
		return fmt.Errorf("postgres: add usage: %w", err)
	}
	return nil
}

// Usage returns the conversation's usage on the UTC day containing day.
func (db *DB) Usage(ctx context.Context, conv string, day time.Time) (llm.Usage, error) {
	var u llm.Usage
	err := db.pool.QueryRow(ctx, `SELECT prompt_tokens, completion_tokens, cost_usd
		FROM usage WHERE conv = $1 AND day = $2`, conv, dayKey(day)).Scan(&u.PromptTokens, &u.CompletionTokens, &u.CostUSD)
	if err != nil && !errors.Is(err, pgq.ErrNoRows) {
		return llm.Usage{}, fmt.Errorf("postgres: usage: %w", err)
	}
	return u, nil
}

// DayUsage returns the usage of all conversations on the UTC day containing day.
func (db *DB) DayUsage(ctx context.Context, day time.Time) (llm.Usage, error) {
	var u llm.Usage
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(SUM(prompt_tokens), 0)::bigint, COALESCE(SUM(completion_tokens), 0)::bigint,
		COALESCE(SUM(cost_usd), 0)
		FROM usage WHERE day = $1`, dayKey(day)).Scan(&u.PromptTokens, &u.CompletionTokens, &u.CostUSD)
	if err != nil {
		return llm.Usage{}, fmt.Errorf("postgres: day usage: %w", err)
	}
	return u, nil
}

// UsageDays returns each UTC day's total usage from the day containing
// since onwards, oldest first.
func (db *DB) UsageDays(ctx context.Context, since time.Time) ([]store.DayUsage, error) {
	rows, err := db.pool.Query(ctx, `SELECT day, SUM(prompt_tokens)::bigint, SUM(completion_tokens)::bigint, SUM(cost_usd)
		FROM usage WHERE day >= $1 GROUP BY day ORDER BY day`, dayKey(since))
	if err != nil {
		return nil, fmt.Errorf("postgres: usage days: %w", err)
	}
	out, err := pgq.CollectRows(rows, func(r pgq.CollectableRow) (store.DayUsage, error) {
		var d store.DayUsage
		err := r.Scan(&d.Day, &d.Usage.PromptTokens, &d.Usage.CompletionTokens, &d.Usage.CostUSD)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: usage days: %w", err)
	}
	return out, nil
}
