package metrics_test

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// scrape writes r's metrics and parses them with Prometheus's own parser;
// it also checks that every family has exactly one # TYPE line and one
// # HELP line.
func scrape(t *testing.T, r *metrics.Registry) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WritePrometheus(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	types, helps := map[string]int{}, map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" {
			switch f[1] {
			case "TYPE":
				types[f[2]]++
			case "HELP":
				helps[f[2]]++
			}
		}
	}
	for name := range fams {
		if types[name] != 1 || helps[name] != 1 {
			t.Errorf("%s: %d TYPE and %d HELP lines, want one of each", name, types[name], helps[name])
		}
	}
	return fams, text
}

// series returns the metric of fam whose labels include want.
func series(t *testing.T, fams map[string]*dto.MetricFamily, fam string, want map[string]string) *dto.Metric {
	t.Helper()
	f := fams[fam]
	if f == nil {
		t.Fatalf("%s missing", fam)
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	t.Fatalf("%s%v missing", fam, want)
	return nil
}

// TestExactValues: after known recordings, Prometheus's parser reads
// exactly those values back: counters, a histogram's cumulative buckets
// (an observation exactly on a bound counts in that bound's bucket, one
// above the last bound only in +Inf), its sum and count.
func TestExactValues(t *testing.T) {
	r := metrics.New()
	r.MessageReceived("telegram")
	r.MessageReceived("telegram")
	r.MessageReceived("slack")
	r.Tokens("openai", 7, 0)
	r.Tokens("openai", 5, 3)
	r.Approval("approved", 5*time.Second)         // exactly on the bound 5
	r.Approval("approved", 5001*time.Millisecond) // just above: in 15
	r.Approval("denied", 0)                       // below the first bound: in 1
	r.Approval("expired", 2*time.Hour)            // above 3600: only +Inf
	fams, text := scrape(t, r)
	for _, c := range []struct {
		fam    string
		labels map[string]string
		want   float64
	}{
		{metrics.MessagesReceived, map[string]string{"gateway": "telegram"}, 2},
		{metrics.MessagesReceived, map[string]string{"gateway": "slack"}, 1},
		{metrics.LLMTokens, map[string]string{"provider": "openai", "kind": "prompt"}, 12},
		{metrics.LLMTokens, map[string]string{"provider": "openai", "kind": "completion"}, 3},
		{metrics.Approvals, map[string]string{"outcome": "approved"}, 2},
		{metrics.TurnErrors, nil, 0},
	} {
		if v := series(t, fams, c.fam, c.labels).GetCounter().GetValue(); v != c.want {
			t.Errorf("%s%v = %v, want %v", c.fam, c.labels, v, c.want)
		}
	}
	h := series(t, fams, metrics.ApprovalWait, nil).GetHistogram()
	want := map[float64]uint64{1: 1, 5: 2, 15: 3, 30: 3, 3600: 3}
	for _, b := range h.GetBucket() {
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("bucket le=%v: %d, want %d\n%s", b.GetUpperBound(), b.GetCumulativeCount(), w, text)
		}
	}
	if !strings.Contains(text, metrics.ApprovalWait+`_bucket{le="+Inf"} 4`) {
		t.Errorf("no +Inf bucket of 4:\n%s", text)
	}
	if h.GetSampleCount() != 4 || math.Abs(h.GetSampleSum()-(5+5.001+7200)) > 1e-9 {
		t.Errorf("count %d sum %v, want 4 and %v", h.GetSampleCount(), h.GetSampleSum(), 5+5.001+7200.0)
	}
}

// TestConcurrentRecording: recordings from many goroutines (run it with
// -race) all count, in counters and in a histogram.
func TestConcurrentRecording(t *testing.T) {
	r := metrics.New()
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				r.ToolCall("shell", "allow")
				r.ToolRun("shell", 100*time.Millisecond)
				r.Delivery("telegram").Sent()
			}
		}()
	}
	var scrapes sync.WaitGroup
	scrapes.Add(1)
	go func() { // scrapes while recording: each must parse
		defer scrapes.Done()
		for range 5 {
			var buf bytes.Buffer
			if err := r.WritePrometheus(&buf); err != nil {
				t.Error(err)
			}
			parser := expfmt.NewTextParser(model.LegacyValidation)
			if _, err := parser.TextToMetricFamilies(&buf); err != nil {
				t.Errorf("a scrape while recording: %v", err)
			}
		}
	}()
	wg.Wait()
	scrapes.Wait()
	fams, _ := scrape(t, r)
	const n = workers * each
	if v := series(t, fams, metrics.ToolCalls, map[string]string{"tool": "shell"}).GetCounter().GetValue(); v != n {
		t.Errorf("tool calls %v, want %d", v, n)
	}
	if v := series(t, fams, metrics.DeliveryChunks, nil).GetCounter().GetValue(); v != n {
		t.Errorf("chunks %v, want %d", v, n)
	}
	h := series(t, fams, metrics.ToolDuration, map[string]string{"tool": "shell"}).GetHistogram()
	if h.GetSampleCount() != n || math.Abs(h.GetSampleSum()-0.1*n) > 1e-6 {
		t.Errorf("tool runs: count %d sum %v, want %d and %v", h.GetSampleCount(), h.GetSampleSum(), n, 0.1*n)
	}
}

// TestLabelValuesAreBounded: a family keeps at most 1000 series however
// many names come (past them every value reads "overflow", and nothing is
// lost from the counts), and a label value is cut to 128 bytes.
func TestLabelValuesAreBounded(t *testing.T) {
	r := metrics.New()
	for i := range 3000 {
		r.Webhook(strings.Repeat("w", i%200)+string(rune('a'+i%26))+strings.Repeat("é", i/200), "accepted")
	}
	fams, _ := scrape(t, r)
	f := fams[metrics.WebhookDeliveries]
	if n := len(f.GetMetric()); n > 1001 {
		t.Errorf("%d series of %s, want at most 1001", n, metrics.WebhookDeliveries)
	}
	var total float64
	for _, m := range f.GetMetric() {
		total += m.GetCounter().GetValue()
		for _, l := range m.GetLabel() {
			if len(l.GetValue()) > 128 {
				t.Errorf("label %s of %d bytes", l.GetName(), len(l.GetValue()))
			}
		}
	}
	if total != 3000 {
		t.Errorf("%v deliveries counted, want 3000", total)
	}
	if m := series(t, fams, metrics.WebhookDeliveries, map[string]string{"webhook": "overflow", "outcome": "overflow"}); m.GetCounter().GetValue() == 0 {
		t.Error("the overflow series counted nothing")
	}
}

// TestProcessMetricsKeepTheirNames: the Go runtime and process families
// that /metrics showed with the VictoriaMetrics library (and that
// docs/operations.md and the dashboards built on the Prometheus
// collectors name) are still there, with their types and plausible values.
func TestProcessMetricsKeepTheirNames(t *testing.T) {
	fams, _ := scrape(t, metrics.New())
	for name, typ := range map[string]string{
		"go_goroutines": "GAUGE", "go_threads": "GAUGE", "go_gomaxprocs": "GAUGE", "go_info": "GAUGE",
		"go_memstats_alloc_bytes": "GAUGE", "go_memstats_alloc_bytes_total": "COUNTER", "go_memstats_heap_inuse_bytes": "GAUGE",
		"go_memstats_sys_bytes": "GAUGE", "go_memstats_mallocs_total": "COUNTER", "go_gc_duration_seconds": "SUMMARY",
		"process_cpu_seconds_total": "COUNTER", "process_resident_memory_bytes": "GAUGE",
		"process_start_time_seconds": "GAUGE", "process_open_fds": "GAUGE", "process_max_fds": "GAUGE",
		"process_virtual_memory_bytes": "GAUGE", "process_io_read_bytes_total": "COUNTER", "process_num_threads": "GAUGE",
	} {
		f, ok := fams[name]
		if !ok {
			if strings.HasPrefix(name, "process_") && name != "process_start_time_seconds" && !onLinux() {
				continue
			}
			t.Errorf("%s missing", name)
			continue
		}
		if f.GetType().String() != typ {
			t.Errorf("%s: %s, want %s", name, f.GetType(), typ)
		}
	}
	gauge := func(name string) float64 { return fams[name].GetMetric()[0].GetGauge().GetValue() }
	if g := gauge("go_goroutines"); g < 1 {
		t.Errorf("go_goroutines %v", g)
	}
	if s := gauge("process_start_time_seconds"); s < float64(time.Now().Add(-time.Hour).Unix()) || s > float64(time.Now().Unix()+1) {
		t.Errorf("process_start_time_seconds %v, now %d", s, time.Now().Unix())
	}
	if onLinux() && gauge("process_resident_memory_bytes") < 1<<20 {
		t.Errorf("process_resident_memory_bytes %v", gauge("process_resident_memory_bytes"))
	}
}

func onLinux() bool { _, err := os.Stat("/proc/self/status"); return err == nil }

// TestPromtoolChecksAScrape: Prometheus's own linter (promtool check
// metrics, from Debian's package prometheus) finds nothing to say about a
// scrape. Skipped where promtool is not installed.
func TestPromtoolChecksAScrape(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian: apt-get install prometheus)")
	}
	r := metrics.New()
	r.QueueDepthFunc(func() int { return 2 })
	r.SetInstance("a", "v1", false)
	r.MessageReceived("telegram")
	r.LLMRequest("openai", "ok", time.Second)
	r.ToolRun("shell", time.Second)
	r.Approval("approved", time.Minute)
	var buf bytes.Buffer
	if err := r.WritePrometheus(&buf); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
