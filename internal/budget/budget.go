// Package budget implements core.Budget over the store's token usage: daily
// caps on one conversation's tokens, on all conversations' tokens and on
// their cost in USD, per UTC day.
//
// The cost is priced at one price, the first provider's: the store counts
// usage per conversation and day, not per provider, so tokens a fallback
// provider served are priced as if the first had served them.
package budget

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// Usage reads recorded usage; store.UsageStore is one.
type Usage interface {
	// Usage returns conv's usage on the UTC day containing day.
	Usage(ctx context.Context, conv string, day time.Time) (llm.Usage, error)
	// DayUsage returns all conversations' usage on the UTC day containing day.
	DayUsage(ctx context.Context, day time.Time) (llm.Usage, error)
}

// Caps are the daily caps; 0 is unlimited.
type Caps struct {
	ConversationDailyTokens int
	DailyTokens             int
	DailyUSD                float64
}

// Price is a provider's price in USD per million tokens.
type Price struct {
	InputPerMTok, OutputPerMTok float64
}

// Cost is what u costs at p, in USD.
func (p Price) Cost(u llm.Usage) float64 {
	return (float64(u.PromptTokens)*p.InputPerMTok + float64(u.CompletionTokens)*p.OutputPerMTok) / 1e6
}

// Budget checks Caps against the recorded usage.
type Budget struct {
	usage  Usage
	limits atomic.Pointer[limits] // replaced whole by Set
}

// limits are a Budget's caps and price.
type limits struct {
	caps  Caps
	price *Price
}

var _ core.Budget = (*Budget)(nil)

// New returns a Budget over usage. price may be nil (no cost shown); a
// DailyUSD cap without a price is never reached (config refuses it).
func New(usage Usage, caps Caps, price *Price) *Budget {
	b := &Budget{usage: usage}
	b.Set(caps, price)
	return b
}

// Set replaces the caps and the price for the turns checked from now on (a
// configuration reload). Safe beside Exceeded and StatusLines.
func (b *Budget) Set(caps Caps, price *Price) {
	b.limits.Store(&limits{caps: caps, price: price})
}

func total(u llm.Usage) int { return u.PromptTokens + u.CompletionTokens }

func tokens(n int) string { return strconv.Itoa(n) + " tokens" }

// usd formats an amount of dollars: to the cent from one dollar up, to a
// hundredth of a cent below.
func usd(v float64) string {
	if v >= 1 || v == 0 {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("$%.4f", v)
}

// Exceeded returns the first cap reached, the conversation's own first.
func (b *Budget) Exceeded(ctx context.Context, conv string, now time.Time) (core.BudgetCap, bool, error) {
	l := b.limits.Load()
	if limit := l.caps.ConversationDailyTokens; limit > 0 {
		u, err := b.usage.Usage(ctx, conv, now)
		if err != nil {
			return core.BudgetCap{}, false, fmt.Errorf("budget: %w", err)
		}
		if used := total(u); used >= limit {
			return core.BudgetCap{Key: "budget.conversation_daily_tokens", What: "the daily token budget of this conversation",
				Limit: tokens(limit), Used: tokens(used), PerConversation: true}, true, nil
		}
	}
	limit, usdLimit := l.caps.DailyTokens, l.caps.DailyUSD
	if limit <= 0 && (usdLimit <= 0 || l.price == nil) {
		return core.BudgetCap{}, false, nil
	}
	u, err := b.usage.DayUsage(ctx, now)
	if err != nil {
		return core.BudgetCap{}, false, fmt.Errorf("budget: %w", err)
	}
	if used := total(u); limit > 0 && used >= limit {
		return core.BudgetCap{Key: "budget.daily_tokens", What: "the daily token budget of all conversations",
			Limit: tokens(limit), Used: tokens(used)}, true, nil
	}
	if usdLimit > 0 && l.price != nil {
		if cost := l.price.Cost(u); cost >= usdLimit {
			return core.BudgetCap{Key: "budget.daily_usd", What: "the daily spending budget",
				Limit: usd(usdLimit), Used: usd(cost)}, true, nil
		}
	}
	return core.BudgetCap{}, false, nil
}

// StatusLines says today's tokens, of conv and of all conversations, and
// their cost where a price is set, each against its cap where one is set.
func (b *Budget) StatusLines(ctx context.Context, conv string, now time.Time) ([]string, error) {
	l := b.limits.Load()
	mine, err := b.usage.Usage(ctx, conv, now)
	if err != nil {
		return nil, fmt.Errorf("budget: %w", err)
	}
	all, err := b.usage.DayUsage(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("budget: %w", err)
	}
	lines := []string{"Usage today (UTC): this conversation " + against(tokens(total(mine)), l.caps.ConversationDailyTokens > 0, tokens(l.caps.ConversationDailyTokens)) +
		"; all conversations " + against(tokens(total(all)), l.caps.DailyTokens > 0, tokens(l.caps.DailyTokens))}
	if l.price != nil {
		lines = append(lines, "Cost today (UTC): "+against(usd(l.price.Cost(all)), l.caps.DailyUSD > 0, usd(l.caps.DailyUSD)))
	}
	return lines, nil
}

// against writes used, and "of limit" when capped.
func against(used string, capped bool, limit string) string {
	if !capped {
		return used
	}
	return strings.TrimSuffix(used, " tokens") + " of " + limit
}
