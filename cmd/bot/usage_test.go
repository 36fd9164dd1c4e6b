package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestAuditUsage: `bot audit -usage -since 7d` prints one line a UTC day
// of the last week, all conversations added up, oldest first, with the
// cost recorded with the usage (each request at the price of the provider
// that answered it); -json prints the same as an array;
// -usage with -conv is a usage error.
func TestAuditUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`llm: {providers: [{name: p, base_url: "http://127.0.0.1:1/v1", price: {input_per_mtok: 1, output_per_mtok: 4}}]}
store: {dsn: %q}
http: {listen: ""}
`, filepath.Join(dir, "gatehouse.db"))
	writeFile(t, dir, "config.yaml", cfg)
	today := time.Now().UTC()
	clock := today
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "gatehouse.db"), sqlite.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		daysAgo int
		conv    string
		u       llm.Usage
	}{
		{10, "telegram:1", llm.Usage{PromptTokens: 999, CompletionTokens: 999, CostUSD: 1}}, // before -since
		{2, "telegram:1", llm.Usage{PromptTokens: 1000, CompletionTokens: 100, CostUSD: 0.0014}},
		{2, "slack:C1", llm.Usage{PromptTokens: 500, CompletionTokens: 50, CostUSD: 0.0007}},
		// Served by another provider, at three times p's price.
		{0, "telegram:1", llm.Usage{PromptTokens: 1000000, CompletionTokens: 125000, CostUSD: 4.5}},
		{0, "telegram:1", llm.Usage{PromptTokens: 1000000, CompletionTokens: 125000}}, // a free provider
	} {
		clock = today.AddDate(0, 0, -a.daysAgo)
		if err := db.AddUsage(ctx, a.conv, a.u); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	day := func(ago int) string { return today.AddDate(0, 0, -ago).Format(time.DateOnly) }

	r := runOnce(t, dir, baseEnv(dir), "", "audit", "-usage", "-since", "7d")
	if r.code != exitOK {
		t.Fatalf("bot audit -usage: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	want := [][]string{
		{"DAY", "(UTC)", "PROMPT", "COMPLETION", "TOTAL", "USD"},
		{day(2), "1500", "150", "1650", "0.0021"},
		{day(0), "2000000", "250000", "2250000", "4.5000"},
	}
	if len(rows) != len(want) {
		t.Fatalf("bot audit -usage printed %d lines, want %d:\n%s", len(rows), len(want), r.stdout)
	}
	for i := range want {
		if strings.Join(rows[i], " ") != strings.Join(want[i], " ") {
			t.Errorf("line %d = %q, want %q", i, rows[i], want[i])
		}
	}

	r = runOnce(t, dir, baseEnv(dir), "", "audit", "-usage", "-since", "7d", "-json")
	var days []struct {
		Day   string   `json:"day"`
		Total int      `json:"total_tokens"`
		USD   *float64 `json:"usd"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &days); err != nil || r.code != exitOK {
		t.Fatalf("bot audit -usage -json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if len(days) != 2 || days[1].Day != day(0) || days[1].Total != 2250000 || days[1].USD == nil || *days[1].USD != 4.5 {
		t.Errorf("json = %+v", days)
	}

	r = runOnce(t, dir, baseEnv(dir), "", "audit", "-usage", "-conv", "telegram:1")
	if r.code != exitConfig || !strings.Contains(r.stderr, "-usage") {
		t.Errorf("-usage -conv: exit %d, stderr %q; want %d", r.code, r.stderr, exitConfig)
	}
}
