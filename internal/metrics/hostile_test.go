package metrics_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// hostile are label values a configuration or an MCP server could bring:
// the text format's special characters, control characters and bytes
// that are not UTF-8.
var hostile = []string{`a"b`, `a\b`, "a\nb", `a\nb`, "a\rb", "a\tb", "a\x00b", "a\x7fb", "ü}", `"}{x="`, "a\xffb", "a\xfeb", "\xe2\x82"}

// TestHostileLabelValues: each hostile value reads back from the scrape
// as it was recorded (one that is not UTF-8 with U+FFFD for its bad bytes), no
// two series share their labels, and promtool finds nothing to say.
func TestHostileLabelValues(t *testing.T) {
	r := metrics.New()
	for i, v := range hostile {
		for range i + 1 {
			r.ToolCall(v, "allow")
		}
		r.ToolRun(v, time.Duration(i)*time.Second)
	}
	fams, text := scrape(t, r)
	seen := map[string]bool{}
	for _, m := range fams[metrics.ToolCalls].GetMetric() {
		var key strings.Builder
		for _, l := range m.GetLabel() {
			key.WriteString(l.GetName() + "=" + l.GetValue() + ";")
		}
		if seen[key.String()] {
			t.Errorf("two series %s%s", metrics.ToolCalls, key.String())
		}
		seen[key.String()] = true
	}
	distinct := map[string]bool{}
	for _, v := range hostile {
		distinct[strings.ToValidUTF8(v, "\uFFFD")] = true
	}
	if n := len(fams[metrics.ToolCalls].GetMetric()); n != len(distinct) {
		t.Errorf("%d series of %s, want %d", n, metrics.ToolCalls, len(distinct))
	}
	for i, v := range hostile[:10] { // UTF-8: read back as they are
		m := series(t, fams, metrics.ToolCalls, map[string]string{"tool": v})
		if got := m.GetCounter().GetValue(); got != float64(i+1) {
			t.Errorf("tool %q: %v calls, want %d", v, got, i+1)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian: apt-get install prometheus)")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
