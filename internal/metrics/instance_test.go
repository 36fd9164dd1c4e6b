package metrics_test

import (
	"bytes"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// TestInstanceInfo: gatehouse_instance_info is a gauge of 1 with HELP and
// TYPE, naming the instance (a name with a quote and a backslash round-
// trips), its version and whether the store is shared, under labels that
// do not collide with the scrape target's "instance".
func TestInstanceInfo(t *testing.T) {
	r := metrics.New()
	r.SetInstance(`host-"a"\9`, "v1.2.3", true)
	var buf bytes.Buffer
	if err := r.WritePrometheus(&buf); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, buf.String())
	}
	f := fams[metrics.InstanceInfo]
	if f == nil || f.GetType().String() != "GAUGE" || f.GetHelp() == "" || len(f.GetMetric()) != 1 {
		t.Fatalf("%s: %v; want one gauge with HELP", metrics.InstanceInfo, f)
	}
	m := f.GetMetric()[0]
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	want := map[string]string{"instance_name": `host-"a"\9`, "version": "v1.2.3", "shared": "true"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q; want %q (labels %v)", k, got[k], v, got)
		}
	}
	if _, ok := got["instance"]; ok {
		t.Error(`a label "instance" collides with the scrape target's`)
	}
	if m.GetGauge().GetValue() != 1 {
		t.Errorf("value %v; want 1", m.GetGauge().GetValue())
	}
	var none *metrics.Registry
	none.SetInstance("x", "", false) // nil-safe
}
