package budget_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/budget"
	"github.com/gatehouse-bot/gatehouse/core/llm"
)

// fixedUsage is usage of one day: per conversation and in all.
type fixedUsage map[string]llm.Usage

// priced returns f with each conversation's cost recorded at p, as the
// Priced providers record it.
func (f fixedUsage) priced(p budget.Price) fixedUsage {
	out := make(fixedUsage, len(f))
	for conv, u := range f {
		u.CostUSD = p.Cost(u)
		out[conv] = u
	}
	return out
}

func (f fixedUsage) Usage(_ context.Context, conv string, _ time.Time) (llm.Usage, error) {
	return f[conv], nil
}

func (f fixedUsage) DayUsage(context.Context, time.Time) (llm.Usage, error) {
	var t llm.Usage
	for _, u := range f {
		t.PromptTokens += u.PromptTokens
		t.CompletionTokens += u.CompletionTokens
		t.CostUSD += u.CostUSD
	}
	return t, nil
}

// TestExceeded: a cap is reached when today's usage is at or over it; the
// conversation's own cap is named first; 0 is unlimited; the cost is the
// price per million tokens of each kind.
func TestExceeded(t *testing.T) {
	price := budget.Prices{"p": {InputPerMTok: 100, OutputPerMTok: 1000}} // a: $0.28, b: $0.40
	usage := fixedUsage{
		"a": {PromptTokens: 800, CompletionTokens: 200}, // 1000 tokens
		"b": {PromptTokens: 4000, CompletionTokens: 0},
	}.priced(price["p"])
	tests := []struct {
		name    string
		caps    budget.Caps
		price   budget.Prices
		conv    string
		wantKey string
		used    string
	}{
		{"unlimited", budget.Caps{}, price, "a", "", ""},
		{"conversation at cap", budget.Caps{ConversationDailyTokens: 1000, DailyTokens: 10}, nil, "a", "budget.conversation_daily_tokens", "1000 tokens"},
		{"conversation under cap", budget.Caps{ConversationDailyTokens: 1001}, nil, "a", "", ""},
		{"other conversation", budget.Caps{ConversationDailyTokens: 1000}, nil, "c", "", ""},
		{"all conversations", budget.Caps{ConversationDailyTokens: 5000, DailyTokens: 5000}, nil, "c", "budget.daily_tokens", "5000 tokens"},
		{"all under cap", budget.Caps{DailyTokens: 5001}, nil, "c", "", ""},
		{"usd", budget.Caps{DailyUSD: 0.68}, price, "c", "budget.daily_usd", "$0.6800"},
		{"usd under cap", budget.Caps{DailyUSD: 0.69}, price, "c", "", ""},
		{"usd without price", budget.Caps{DailyUSD: 0.01}, nil, "c", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, over, err := budget.New(usage, tt.caps, tt.price).Exceeded(context.Background(), tt.conv, time.Now())
			if err != nil || over != (tt.wantKey != "") || c.Key != tt.wantKey || c.Used != tt.used {
				t.Errorf("Exceeded = %+v, %v, %v; want key %q used %q", c, over, err, tt.wantKey, tt.used)
			}
		})
	}
}

// TestStatusLines: usage is shown against the caps that are set, and the
// cost only with a price.
func TestStatusLines(t *testing.T) {
	price := budget.Prices{"p": {InputPerMTok: 100, OutputPerMTok: 1000}}
	usage := fixedUsage{"a": {PromptTokens: 800, CompletionTokens: 200}, "b": {PromptTokens: 4000}}.priced(price["p"])
	tests := []struct {
		caps  budget.Caps
		price budget.Prices
		want  []string
	}{
		{budget.Caps{}, nil, []string{"Usage today (UTC): this conversation 1000 tokens; all conversations 5000 tokens"}},
		{budget.Caps{ConversationDailyTokens: 2000, DailyUSD: 2}, price, []string{
			"Usage today (UTC): this conversation 1000 of 2000 tokens; all conversations 5000 tokens",
			"Cost today (UTC): $0.6800 of $2.00"}},
		{budget.Caps{DailyTokens: 9000}, price, []string{
			"Usage today (UTC): this conversation 1000 tokens; all conversations 5000 of 9000 tokens",
			"Cost today (UTC): $0.6800"}},
	}
	for _, tt := range tests {
		got, err := budget.New(usage, tt.caps, tt.price).StatusLines(context.Background(), "a", time.Now())
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("StatusLines(%+v) = %q, %v; want %q", tt.caps, got, err, tt.want)
		}
	}
}

// TestSetReplacesTheCaps: Set changes the caps of the next check, beside
// concurrent checks (run with -race).
func TestSetReplacesTheCaps(t *testing.T) {
	usage := fixedUsage{"a": {PromptTokens: 100}}
	b := budget.New(usage, budget.Caps{ConversationDailyTokens: 1000}, nil)
	ctx := context.Background()
	if _, hit, _ := b.Exceeded(ctx, "a", time.Now()); hit {
		t.Fatal("100 of 1000 reached the cap")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			b.Exceeded(ctx, "a", time.Now()) //nolint:errcheck // racing Set
		}
	}()
	b.Set(budget.Caps{DailyTokens: 50}, nil)
	<-done
	c, hit, err := b.Exceeded(ctx, "a", time.Now())
	if err != nil || !hit || c.Key != "budget.daily_tokens" {
		t.Errorf("after Set: %+v %v %v, want budget.daily_tokens reached", c, hit, err)
	}
}

// usageProvider answers every request with the same usage.
type usageProvider struct {
	name string
	u    llm.Usage
}

func (p usageProvider) Name() string { return p.name }

func (p usageProvider) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{Usage: p.u, Provider: p.name}, nil
}

// TestPriced: a wrapped provider's answer costs its tokens at the price of
// its own name, nothing without one; Set changes the price of the next
// request, beside concurrent requests (run with -race).
func TestPriced(t *testing.T) {
	ctx := context.Background()
	u := llm.Usage{PromptTokens: 1000, CompletionTokens: 500}
	b := budget.New(fixedUsage{}, budget.Caps{}, budget.Prices{"second": {InputPerMTok: 1000, OutputPerMTok: 4000}})
	first, second := b.Priced(usageProvider{"first", u}), b.Priced(usageProvider{"second", u})
	cost := func(p llm.Provider) float64 {
		t.Helper()
		resp, err := p.Complete(ctx, llm.Request{})
		if err != nil || resp.Usage.PromptTokens != 1000 || resp.Usage.CompletionTokens != 500 {
			t.Fatalf("%s: %+v, %v", p.Name(), resp, err)
		}
		return resp.Usage.CostUSD
	}
	if got := cost(first); got != 0 {
		t.Errorf("first (no price) cost %v, want 0", got)
	}
	if got := cost(second); got != 3 { // 1000 × $1000/M + 500 × $4000/M
		t.Errorf("second cost %v, want 3", got)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			second.Complete(ctx, llm.Request{}) //nolint:errcheck // racing Set
		}
	}()
	b.Set(budget.Caps{}, budget.Prices{"first": {InputPerMTok: 2000}, "second": {OutputPerMTok: 2000}})
	<-done
	if got := cost(first); got != 2 {
		t.Errorf("first after Set cost %v, want 2", got)
	}
	if got := cost(second); got != 1 {
		t.Errorf("second after Set cost %v, want 1", got)
	}
}

// TestExceededUsesTheRecordedCost: the USD cap and the status read the
// cost recorded with the usage, whatever the prices are now.
func TestExceededUsesTheRecordedCost(t *testing.T) {
	ctx := context.Background()
	usage := fixedUsage{"a": {PromptTokens: 10, CostUSD: 1.5}}
	b := budget.New(usage, budget.Caps{DailyUSD: 1.5}, budget.Prices{"p": {InputPerMTok: 1}})
	c, over, err := b.Exceeded(ctx, "a", time.Now())
	if err != nil || !over || c.Key != "budget.daily_usd" || c.Used != "$1.50" {
		t.Errorf("Exceeded = %+v, %v, %v; want budget.daily_usd used $1.50", c, over, err)
	}
	lines, err := b.StatusLines(ctx, "a", time.Now())
	if err != nil || len(lines) != 2 || lines[1] != "Cost today (UTC): $1.50 of $1.50" {
		t.Errorf("StatusLines = %q, %v", lines, err)
	}
}

// TestDailyUSDReachedByASumOfCosts: ten requests of $0.10 each reach a
// $1 cap, although their floating-point sum is 0.9999999999999999.
func TestDailyUSDReachedByASumOfCosts(t *testing.T) {
	usage := fixedUsage{}
	for i := range 10 {
		usage[string(rune('a'+i))] = llm.Usage{PromptTokens: 1000, CostUSD: 0.1}
	}
	b := budget.New(usage, budget.Caps{DailyUSD: 1}, budget.Prices{"p": {InputPerMTok: 100}})
	c, over, err := b.Exceeded(context.Background(), "a", time.Now())
	if err != nil || !over || c.Key != "budget.daily_usd" || c.Used != "$1.00" {
		t.Errorf("Exceeded = %+v, %v, %v; want budget.daily_usd reached with $1.00 used", c, over, err)
	}
}
