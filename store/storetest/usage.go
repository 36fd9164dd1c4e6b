package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store"
)

// Clock is a settable clock for stores that take a now function.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// UsageContract tests a store.UsageStore: usage, tokens and cost, adds up
// per conversation and UTC calendar day. newUsage must make the store read
// its time from now.
func UsageContract(t *testing.T, newUsage func(t *testing.T, now func() time.Time) store.UsageStore) {
	t.Helper()
	ctx := context.Background()
	plus2 := time.FixedZone("UTC+2", 2*3600)
	day1 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)
	clock := NewClock(day1)
	u := newUsage(t, clock.Now)
	adds := []struct {
		at   time.Time
		conv string
		u    llm.Usage
	}{
		{day1.Add(time.Minute), "alpha:1", llm.Usage{PromptTokens: 100, CompletionTokens: 10, CostUSD: 0.5}},
		{day1.Add(23 * time.Hour), "alpha:1", llm.Usage{PromptTokens: 5, CompletionTokens: 1}}, // a provider without a price
		// 01:30 in UTC+2 is 23:30 UTC of day 1.
		{time.Date(2026, 3, 2, 1, 30, 0, 0, plus2), "alpha:1", llm.Usage{PromptTokens: 1000, CostUSD: 0.25}},
		{day2.Add(time.Second), "alpha:1", llm.Usage{PromptTokens: 7, CompletionTokens: 3, CostUSD: 2}},
		{day1.Add(time.Hour), "slack:C1", llm.Usage{PromptTokens: 1, CompletionTokens: 2, CostUSD: 0.125}},
	}
	for _, a := range adds {
		clock.Set(a.at)
		if err := u.AddUsage(ctx, a.conv, a.u); err != nil {
			t.Fatalf("AddUsage: %v", err)
		}
	}
	tests := []struct {
		conv string
		day  time.Time
		want llm.Usage
	}{
		{"alpha:1", day1, llm.Usage{PromptTokens: 1105, CompletionTokens: 11, CostUSD: 0.75}},
		{"alpha:1", day1.Add(17 * time.Hour), llm.Usage{PromptTokens: 1105, CompletionTokens: 11, CostUSD: 0.75}},
		{"alpha:1", day2, llm.Usage{PromptTokens: 7, CompletionTokens: 3, CostUSD: 2}},
		// 00:30 on day 2 in UTC+2 is still day 1 in UTC.
		{"alpha:1", time.Date(2026, 3, 2, 0, 30, 0, 0, plus2), llm.Usage{PromptTokens: 1105, CompletionTokens: 11, CostUSD: 0.75}},
		{"slack:C1", day1, llm.Usage{PromptTokens: 1, CompletionTokens: 2, CostUSD: 0.125}},
		{"slack:C1", day2, llm.Usage{}},
		{"discord:9", day1, llm.Usage{}},
	}
	for _, tt := range tests {
		got, err := u.Usage(ctx, tt.conv, tt.day)
		if err != nil || got != tt.want {
			t.Errorf("Usage(%s, %s) = %+v, %v; want %+v", tt.conv, tt.day, got, err, tt.want)
		}
	}
	totals := []struct {
		day  time.Time
		want llm.Usage
	}{
		{day1, llm.Usage{PromptTokens: 1106, CompletionTokens: 13, CostUSD: 0.875}},
		{time.Date(2026, 3, 2, 0, 30, 0, 0, plus2), llm.Usage{PromptTokens: 1106, CompletionTokens: 13, CostUSD: 0.875}},
		{day2.Add(20 * time.Hour), llm.Usage{PromptTokens: 7, CompletionTokens: 3, CostUSD: 2}},
		{day1.AddDate(0, 0, -1), llm.Usage{}},
	}
	for _, tt := range totals {
		got, err := u.DayUsage(ctx, tt.day)
		if err != nil || got != tt.want {
			t.Errorf("DayUsage(%s) = %+v, %v; want %+v", tt.day, got, err, tt.want)
		}
	}
	days := []struct {
		since time.Time
		want  []store.DayUsage
	}{
		{day1.AddDate(0, 0, -7), []store.DayUsage{
			{Day: "2026-03-01", Usage: llm.Usage{PromptTokens: 1106, CompletionTokens: 13, CostUSD: 0.875}},
			{Day: "2026-03-02", Usage: llm.Usage{PromptTokens: 7, CompletionTokens: 3, CostUSD: 2}},
		}},
		// Any time of day 2 starts at day 2.
		{day2.Add(23 * time.Hour), []store.DayUsage{{Day: "2026-03-02", Usage: llm.Usage{PromptTokens: 7, CompletionTokens: 3, CostUSD: 2}}}},
		{day2.AddDate(0, 0, 1), nil},
	}
	for _, tt := range days {
		got, err := u.UsageDays(ctx, tt.since)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("UsageDays(%s) = %+v, %v; want %+v", tt.since, got, err, tt.want)
		}
	}
}
