package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/store"
)

// CursorContract tests a store.Cursors (gateways.Cursors): unset keys read "", values round
// trip and are replaced, keys are independent.
func CursorContract(t *testing.T, newCursors func(t *testing.T) store.Cursors) {
	t.Helper()
	ctx := context.Background()
	c := newCursors(t)
	if v, err := c.Cursor(ctx, "alpha.offset"); err != nil || v != "" {
		t.Fatalf("unset Cursor = %q, %v; want \"\", nil", v, err)
	}
	steps := []struct{ key, value string }{
		{"alpha.offset", "1001"},
		{"slack.ts", "1712345678.000100"},
		{"alpha.offset", "1002"}, // replaces
		{"discord.seq", strings.Repeat("é", 300)},
		{"slack.ts", ""}, // set to empty reads as unset
	}
	want := map[string]string{}
	for _, s := range steps {
		if err := c.SetCursor(ctx, s.key, s.value); err != nil {
			t.Fatalf("SetCursor(%q): %v", s.key, err)
		}
		want[s.key] = s.value
		for k, w := range want {
			if v, err := c.Cursor(ctx, k); err != nil || v != w {
				t.Fatalf("after SetCursor(%q, %.10q): Cursor(%q) = %.10q, %v; want %.10q", s.key, s.value, k, v, err, w)
			}
		}
	}
}
