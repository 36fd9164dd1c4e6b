package config

import (
	"errors"
	"strings"
	"testing"
)

// TestBudget: the budget keys default to 0 (unlimited), can be set with a
// provider price, and are refused when negative or when daily_usd lacks a
// price on any provider; the error names the key (and the missing price).
func TestBudget(t *testing.T) {
	const approvers = "hitl: {approvers: [console:local]}\n"
	c := mustParse(t, approvers, noEnv)
	if c.Budget != (Budget{}) {
		t.Errorf("default budget = %+v, want all zero", c.Budget)
	}
	c = mustParse(t, approvers+`llm: {providers: [{base_url: "http://x/v1", price: {input_per_mtok: 0.15, output_per_mtok: 0.6}}]}
budget: {conversation_daily_tokens: 1000, daily_tokens: 50000, daily_usd: 2.5}
`, noEnv)
	if want := (Budget{ConversationDailyTokens: 1000, DailyTokens: 50000, DailyUSD: 2.5}); c.Budget != want {
		t.Errorf("budget = %+v, want %+v", c.Budget, want)
	}
	if p := c.LLM.Providers[0].Price; p == nil || p.InputPerMTok != 0.15 || p.OutputPerMTok != 0.6 {
		t.Errorf("price = %+v", p)
	}
	bad := []struct{ src, key string }{
		{"budget: {conversation_daily_tokens: -1}", "budget.conversation_daily_tokens"},
		{"budget: {daily_tokens: -5}", "budget.daily_tokens"},
		{"budget: {daily_usd: -0.5}", "budget.daily_usd"},
		{"budget: {daily_usd: 1}", "budget.daily_usd"},
		{`llm: {providers: [{base_url: "http://x/v1"}]}` + "\nbudget: {daily_usd: 1}", "budget.daily_usd"},
		{`llm: {providers: [{base_url: "http://x/v1", price: {input_per_mtok: -1}}]}`, "llm.providers[0].price.input_per_mtok"},
		// Every provider's requests are priced: the second's too.
		{`llm: {providers: [{name: a, base_url: "http://x/v1", price: {input_per_mtok: 1}}, {name: b, base_url: "http://y/v1"}]}` +
			"\nbudget: {daily_usd: 1}", "budget.daily_usd"},
		{"budget: {daily_token: 5}", "budget.daily_token"},
	}
	for _, tt := range bad {
		_, err := Parse([]byte(approvers+tt.src+"\n"), noEnv, specs())
		e, ok := errors.AsType[*Error](err)
		if !ok || e.Key != tt.key {
			t.Errorf("%s: err = %v, want an *Error on %s", tt.src, err, tt.key)
		} else if !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%s: error %q does not name %s", tt.src, err, tt.key)
		}
	}
	_, err := Parse([]byte(approvers+`llm: {providers: [{name: a, base_url: "http://x/v1", price: {input_per_mtok: 1}}, {name: b, base_url: "http://y/v1"}]}
budget: {daily_usd: 1}
`), noEnv, specs())
	if err == nil || !strings.Contains(err.Error(), "llm.providers[1].price") {
		t.Errorf("daily_usd without the second provider's price: %v; want llm.providers[1].price named", err)
	}
	mustParse(t, approvers+`llm: {providers: [{name: a, base_url: "http://x/v1", price: {input_per_mtok: 1}}, {name: b, base_url: "http://y/v1", price: {}}]}
budget: {daily_usd: 1}
`, noEnv)
}
