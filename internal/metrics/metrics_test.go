package metrics_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// TestWritePrometheusParses records one of everything and checks the
// output with Prometheus's own text parser: every family has HELP and
// TYPE, our histograms are histograms, label values are escaped.
func TestWritePrometheusParses(t *testing.T) {
	r := metrics.New()
	r.QueueDepthFunc(func() int { return 3 })
	r.MessageReceived("telegram")
	r.MessageReceived(`we"ird\gw` + "\n")
	r.ReplySent("telegram")
	d := r.Delivery("telegram")
	d.Sent()
	d.Failed()
	r.Reconnects("telegram")()
	r.LLMRequest("openai", "ok", 120*time.Millisecond)
	r.Tokens("openai", 10, 5)
	r.ToolCall("shell", "approve")
	r.ToolRun("shell", time.Second)
	r.Approval("approved", 90*time.Second)
	r.TurnError()
	var buf bytes.Buffer
	if err := r.WritePrometheus(&buf); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, buf.String())
	}
	for name, f := range fams {
		if f.GetHelp() == "" {
			t.Errorf("%s: no HELP text", name)
		}
		if !strings.Contains(buf.String(), "# TYPE "+name+" ") {
			t.Errorf("%s: no TYPE line", name)
		}
	}
	want := map[string]string{
		metrics.MessagesReceived: "COUNTER", metrics.LLMDuration: "HISTOGRAM", metrics.ApprovalWait: "HISTOGRAM",
		metrics.ToolDuration: "HISTOGRAM", metrics.QueueDepth: "GAUGE", metrics.ReloadSuccess: "GAUGE",
		"process_resident_memory_bytes": "GAUGE", "go_goroutines": "GAUGE", metrics.GatewayReconnects: "COUNTER",
	}
	for name, typ := range want {
		f, ok := fams[name]
		if !ok {
			t.Errorf("%s missing", name)
			continue
		}
		if f.GetType().String() != typ {
			t.Errorf("%s: type %s, want %s", name, f.GetType(), typ)
		}
	}
	var odd bool
	for _, m := range fams[metrics.MessagesReceived].GetMetric() {
		for _, l := range m.GetLabel() {
			odd = odd || l.GetValue() == `we"ird\gw`+"\n"
		}
	}
	if !odd {
		t.Errorf("an escaped label value did not round-trip:\n%s", buf.String())
	}
	if v := fams[metrics.QueueDepth].GetMetric()[0].GetGauge().GetValue(); v != 3 {
		t.Errorf("queue depth %v, want 3", v)
	}
}

// TestNilRegistryRecordsNothing: components built without a registry
// record through nil safely.
func TestNilRegistryRecordsNothing(t *testing.T) {
	var r *metrics.Registry
	r.MessageReceived("x")
	r.LLMRequest("p", "ok", time.Second)
	r.Approval("denied", time.Second)
	r.Reconnects("x")()
	r.Delivery("x").Sent()
	r.QueueDepthFunc(func() int { return 0 })
}

// TestRecordingAllocatesNothing: recording a series seen before is a map
// lookup on the message path, without allocations.
func TestRecordingAllocatesNothing(t *testing.T) {
	r := metrics.New()
	gw, provider := strings.Clone("telegram"), strings.Clone("openai")
	record := func() {
		r.MessageReceived(gw)
		r.LLMRequest(provider, "ok", time.Millisecond)
		r.Tokens(provider, 10, 5)
		r.ToolCall("shell", "allow")
		r.ReplySent(gw)
	}
	record()
	if n := testing.AllocsPerRun(100, record); n != 0 {
		t.Errorf("%v allocations per recorded message, want 0", n)
	}
}

// TestSetReload: the reload gauges follow SetReload; a failure keeps the
// time of the last success.
func TestSetReload(t *testing.T) {
	r := metrics.New()
	gauge := func(name string) string {
		var b strings.Builder
		r.WritePrometheus(&b)
		for _, line := range strings.Split(b.String(), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				return v
			}
		}
		return "absent"
	}
	if gauge(metrics.ReloadSuccess) != "0" || gauge(metrics.ReloadTime) != "0" {
		t.Fatalf("before: %s %s", gauge(metrics.ReloadSuccess), gauge(metrics.ReloadTime))
	}
	r.SetReload(true, time.Unix(1700000000, 0))
	if gauge(metrics.ReloadSuccess) != "1" || gauge(metrics.ReloadTime) != "1700000000" {
		t.Errorf("after success: %s %s", gauge(metrics.ReloadSuccess), gauge(metrics.ReloadTime))
	}
	r.SetReload(false, time.Unix(1800000000, 0))
	if gauge(metrics.ReloadSuccess) != "0" || gauge(metrics.ReloadTime) != "1700000000" {
		t.Errorf("after failure: %s %s", gauge(metrics.ReloadSuccess), gauge(metrics.ReloadTime))
	}
}

// TestDurationBucketsReachTheTimeouts: an LLM request or a tool run that
// takes as long as its default timeout allows (llm.timeout and a tool's
// timeout are 60 s by default; the shell's 300 s) falls in a finite
// bucket, so its quantiles are not just the last bucket's bound.
func TestDurationBucketsReachTheTimeouts(t *testing.T) {
	r := metrics.New()
	r.LLMRequest("openai", "ok", 55*time.Second)
	r.ToolRun("shell", 290*time.Second)
	r.ToolRun("read_file", 55*time.Second)
	var buf bytes.Buffer
	if err := r.WritePrometheus(&buf); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range []string{metrics.LLMDuration, metrics.ToolDuration} {
		for _, m := range fams[fam].GetMetric() {
			h := m.GetHistogram()
			var top float64
			var below uint64
			for _, b := range h.GetBucket() {
				if ub := b.GetUpperBound(); ub > top && !math.IsInf(ub, 1) {
					top, below = ub, b.GetCumulativeCount()
				}
			}
			if below != h.GetSampleCount() {
				t.Errorf("%s%v: %d of %d observations above the largest bucket (%v s)", fam, m.GetLabel(), h.GetSampleCount()-below, h.GetSampleCount(), top)
			}
		}
	}
}
