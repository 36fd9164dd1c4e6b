package budget_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/budget"
	"github.com/gatehouse-bot/gatehouse/core"
)

// TestPerConversation: a profile's conversation cap replaces the
// top-level one, higher or lower, under its own key; the cap over all
// conversations and a later Set still apply; 0 is the Budget itself.
func TestPerConversation(t *testing.T) {
	usage := fixedUsage{"a": {PromptTokens: 1000}, "b": {PromptTokens: 3000}}
	b := budget.New(usage, budget.Caps{ConversationDailyTokens: 500}, nil)
	const key = "profiles[0].budget.conversation_daily_tokens"
	ctx, now := context.Background(), time.Now()
	over := func(bd core.Budget, conv string) string {
		t.Helper()
		c, ok, err := bd.Exceeded(ctx, conv, now)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return ""
		}
		return c.Key
	}
	if got := over(b, "a"); got != "budget.conversation_daily_tokens" {
		t.Fatalf("top level: %q", got)
	}
	roomy := b.PerConversation(2000, key)
	if got := over(roomy, "a"); got != "" {
		t.Errorf("a higher profile cap: %q, want a turn", got)
	}
	if got := over(b.PerConversation(800, key), "a"); got != key {
		t.Errorf("a lower profile cap: %q, want %s", got, key)
	}
	lines, err := roomy.StatusLines(ctx, "a", now)
	if err != nil || !strings.Contains(lines[0], "this conversation 1000 of 2000 tokens") {
		t.Errorf("status: %q, %v", lines, err)
	}
	b.Set(budget.Caps{DailyTokens: 4000}, nil)
	if got := over(roomy, "a"); got != "budget.daily_tokens" {
		t.Errorf("after Set: %q, want the cap over all conversations", got)
	}
	if bd := b.PerConversation(0, key); bd != core.Budget(b) {
		t.Errorf("PerConversation(0) = %T, want the Budget itself", bd)
	}
}
