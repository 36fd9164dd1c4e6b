// Package budget implements core.Budget over the store's token usage: daily
// caps on one conversation's tokens, on all conversations' tokens and on
// their cost in USD, per UTC day.
//
// A request's cost is computed once, when it is answered, at the price of
// the provider that answered it (Budget.Priced wraps each provider), and
// recorded with its tokens; the USD cap and the status read that recorded
// cost. A later change of price does not reprice what was recorded.
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

// Prices are the providers' prices, by provider name (llm.providers[].name);
// a provider not in it costs nothing.
type Prices map[string]Price

// Cost is what u's tokens cost at p, in USD.
func (p Price) Cost(u llm.Usage) float64 {
	return (float64(u.PromptTokens)*p.InputPerMTok + float64(u.CompletionTokens)*p.OutputPerMTok) / 1e6
}

// Budget checks Caps against the recorded usage, and prices the requests
// of the providers it wraps (Priced).
type Budget struct {
	usage  Usage
	limits atomic.Pointer[limits] // replaced whole by Set
}

// limits are a Budget's caps and prices.
type limits struct {
	caps   Caps
	prices Prices
}

var _ core.Budget = (*Budget)(nil)

// New returns a Budget over usage. prices may be empty (no cost shown); a
// DailyUSD cap without any price is never reached (config refuses it).
func New(usage Usage, caps Caps, prices Prices) *Budget {
	b := &Budget{usage: usage}
	b.Set(caps, prices)
	return b
}

// Set replaces the caps and the prices: the caps for the turns checked
// from now on, the prices for the requests answered from now on (a
// configuration reload). Safe beside Exceeded, StatusLines and requests.
func (b *Budget) Set(caps Caps, prices Prices) {
	b.limits.Store(&limits{caps: caps, prices: prices})
}

// Price returns the price the provider named name has now, and whether it
// has one.
func (b *Budget) Price(name string) (Price, bool) {
	p, ok := b.limits.Load().prices[name]
	return p, ok
}

// Priced returns p with the cost of each answered request set in its
// Response.Usage.CostUSD, at the price p's name has when it answers (0
// without one). Wrap each provider before building a Cascade over them,
// so that a request is priced at the provider that answered it.
func (b *Budget) Priced(p llm.Provider) llm.Provider { return priced{p: p, b: b} }

type priced struct {
	p llm.Provider
	b *Budget
}

func (p priced) Name() string { return p.p.Name() }

func (p priced) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := p.p.Complete(ctx, req)
	if err != nil {
		return resp, err
	}
	if price, ok := p.b.limits.Load().prices[p.p.Name()]; ok {
		resp.Usage.CostUSD = price.Cost(resp.Usage)
	}
	return resp, nil
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
	return b.exceeded(ctx, conv, now, convCap{})
}

// convCap replaces budget.conversation_daily_tokens where it is set: a
// profile's cap (Budget.PerConversation).
type convCap struct {
	tokens int    // 0: the Budget's own cap
	key    string // the cap's configuration key
}

// of returns the conversation cap in force over l, and its key.
func (c convCap) of(l *limits) (int, string) {
	if c.tokens > 0 {
		return c.tokens, c.key
	}
	return l.caps.ConversationDailyTokens, "budget.conversation_daily_tokens"
}

// PerConversation returns b with tokens as the cap of each conversation
// (named key in what it tells people, "profiles[0].budget.…"); the caps
// over all conversations, the prices and Set are b's. tokens 0 is b
// itself.
func (b *Budget) PerConversation(tokens int, key string) core.Budget {
	if tokens <= 0 {
		return b
	}
	return capped{b: b, c: convCap{tokens: tokens, key: key}}
}

// capped is a Budget with its own conversation cap.
type capped struct {
	b *Budget
	c convCap
}

func (c capped) Exceeded(ctx context.Context, conv string, now time.Time) (core.BudgetCap, bool, error) {
	return c.b.exceeded(ctx, conv, now, c.c)
}

func (c capped) StatusLines(ctx context.Context, conv string, now time.Time) ([]string, error) {
	return c.b.statusLines(ctx, conv, now, c.c)
}

// exceeded is Exceeded with the conversation cap of cc.
func (b *Budget) exceeded(ctx context.Context, conv string, now time.Time, cc convCap) (core.BudgetCap, bool, error) {
	l := b.limits.Load()
	if limit, key := cc.of(l); limit > 0 {
		u, err := b.usage.Usage(ctx, conv, now)
		if err != nil {
			return core.BudgetCap{}, false, fmt.Errorf("budget: %w", err)
		}
		if used := total(u); used >= limit {
			return core.BudgetCap{Key: key, What: "the daily token budget of this conversation",
				Limit: tokens(limit), Used: tokens(used), PerConversation: true}, true, nil
		}
	}
	limit, usdLimit := l.caps.DailyTokens, l.caps.DailyUSD
	if limit <= 0 && (usdLimit <= 0 || len(l.prices) == 0) {
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
	if usdLimit > 0 && len(l.prices) > 0 {
		if cost := u.SummedCost(); cost >= usdLimit {
			return core.BudgetCap{Key: "budget.daily_usd", What: "the daily spending budget",
				Limit: usd(usdLimit), Used: usd(cost)}, true, nil
		}
	}
	return core.BudgetCap{}, false, nil
}

// StatusLines says today's tokens, of conv and of all conversations, and
// their recorded cost when any provider has a price, each against its cap
// where one is set.
func (b *Budget) StatusLines(ctx context.Context, conv string, now time.Time) ([]string, error) {
	return b.statusLines(ctx, conv, now, convCap{})
}

// statusLines is StatusLines with the conversation cap of cc.
func (b *Budget) statusLines(ctx context.Context, conv string, now time.Time, cc convCap) ([]string, error) {
	l := b.limits.Load()
	convLimit, _ := cc.of(l)
	mine, err := b.usage.Usage(ctx, conv, now)
	if err != nil {
		return nil, fmt.Errorf("budget: %w", err)
	}
	all, err := b.usage.DayUsage(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("budget: %w", err)
	}
	lines := []string{"Usage today (UTC): this conversation " + against(tokens(total(mine)), convLimit > 0, tokens(convLimit)) +
		"; all conversations " + against(tokens(total(all)), l.caps.DailyTokens > 0, tokens(l.caps.DailyTokens))}
	if len(l.prices) > 0 {
		lines = append(lines, "Cost today (UTC): "+against(usd(all.SummedCost()), l.caps.DailyUSD > 0, usd(l.caps.DailyUSD)))
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
