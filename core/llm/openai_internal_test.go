package llm

import (
	"math"
	"net/http"
	"slices"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"fraction", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"milliseconds first", map[string]string{"Retry-After": "7", "Retry-After-Ms": "1250"}, 1250 * time.Millisecond},
		{"date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"huge", map[string]string{"Retry-After": "1e300"}, math.MaxInt64},
		{"infinite", map[string]string{"Retry-After": "Inf"}, math.MaxInt64},
		{"not a number", map[string]string{"Retry-After": "NaN"}, 0},
		{"huge milliseconds", map[string]string{"Retry-After-Ms": "1e300"}, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestToolsForCachesBySlice(t *testing.T) {
	p, err := NewOpenAI(OpenAIConfig{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	specs := []ToolSpec{{Name: "a", Parameters: []byte(`{"type":"object"}`)}, {Name: "b"}}
	first := p.toolsFor(specs)
	if len(first) != 2 || first[0].Function.Name != "a" || first[1].Function.Name != "b" {
		t.Fatalf("converted = %+v", first)
	}
	if again := p.toolsFor(specs); &again[0] != &first[0] {
		t.Error("same slice converted twice")
	}
	if shorter := p.toolsFor(specs[:1]); len(shorter) != 1 {
		t.Errorf("shorter slice: %d tools", len(shorter))
	}
	if other := p.toolsFor(slices.Clone(specs)); &other[0] == &first[0] || len(other) != 2 {
		t.Error("a different slice reused the cache")
	}
	if p.toolsFor(nil) != nil {
		t.Error("no specs: want nil tools")
	}
}
