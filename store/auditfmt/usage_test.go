package auditfmt

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/store"
)

// TestWriteUsageJSONRoundsTheDaysCost: a day's cost summed in floating
// point (ten $0.10 requests: 0.9999999999999999) is printed as its decimal
// total.
func TestWriteUsageJSONRoundsTheDaysCost(t *testing.T) {
	sum := 0.0
	for range 10 {
		sum += 0.1
	}
	days := []store.DayUsage{{Day: "2026-03-01", Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5, CostUSD: sum}}}
	var b bytes.Buffer
	if err := WriteUsage(&b, days, true, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"usd": 1`+"\n") {
		t.Errorf("usage JSON %s; want usd 1", b.String())
	}
}
