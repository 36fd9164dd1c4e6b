package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// TestProviderRequestsRecordedPerProvider: with two providers, a request
// the first fails (a 500) and the second answers is recorded under each
// provider's own name — an error for the first, ok and tokens for the
// second — and nothing is recorded under "cascade", which is no provider
// of the configuration.
func TestProviderRequestsRecordedPerProvider(t *testing.T) {
	first, second := fakeoai.Start(t), fakeoai.Start(t)
	first.Push(fakeoai.Status(http.StatusInternalServerError, 0))
	second.Push(fakeoai.Text("the second answers"))
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
llm:
  providers:
    - {name: first, base_url: %q, model: m}
    - {name: second, base_url: %q, model: m}
`, first.URL(), second.URL())), func(string) (string, bool) { return "", false }, gatewaytable.Specs())
	if err != nil {
		t.Fatal(err)
	}
	reg := metrics.New()
	p, err := buildProvider(cfg, zerolog.Nop(), reg, buildBudget(cfg, nil))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil || resp.Provider != "second" {
		t.Fatalf("Complete = %+v, %v; want the second provider's answer", resp, err)
	}

	var buf bytes.Buffer
	if err := reg.WritePrometheus(&buf); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range fams[metrics.LLMRequests].GetMetric() {
		var provider, outcome string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "provider":
				provider = l.GetValue()
			case "outcome":
				outcome = l.GetValue()
			}
		}
		got[provider+" "+outcome] = m.GetCounter().GetValue()
	}
	want := map[string]float64{"first error": 1, "second ok": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v; want %v", metrics.LLMRequests, got, want)
	}
	tokens := map[string]bool{}
	for _, m := range fams[metrics.LLMTokens].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "provider" {
				tokens[l.GetValue()] = true
			}
		}
	}
	if !tokens["second"] || len(tokens) != 1 {
		t.Errorf("%s by provider: %v; want the second's only", metrics.LLMTokens, tokens)
	}
	durations := 0
	for _, m := range fams[metrics.LLMDuration].GetMetric() {
		durations += int(m.GetHistogram().GetSampleCount())
	}
	if durations != 2 {
		t.Errorf("%s holds %d requests; want 2, one per provider tried", metrics.LLMDuration, durations)
	}
}
