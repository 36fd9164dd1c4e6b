package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// get fetches http://addr/path and returns the status and body; status 0
// when the server does not answer (yet).
func get(addr, path string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// scrape fetches /metrics and parses it with Prometheus's text parser,
// failing the test when it does not parse or a family lacks HELP or TYPE.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(addr, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	for name, f := range fams {
		if f.GetHelp() == "" || !strings.Contains(body, "# TYPE "+name+" ") {
			t.Errorf("%s lacks its # HELP text or # TYPE line", name)
		}
	}
	return fams
}

// value returns the value of the series of fam whose labels include want
// (counter, gauge, or a histogram's sample count), and whether it exists.
func value(fams map[string]*dto.MetricFamily, fam string, want map[string]string) (float64, bool) {
	f := fams[fam]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsAfterMessageToolAndApproval runs a message, an allowed tool
// call and an approved one through the real binary against the fake
// OpenAI server and checks /metrics: it parses with Prometheus's parser,
// every family has HELP and TYPE, and the series carry their labels.
func TestMetricsAfterMessageToolAndApproval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scripted := scriptedModel("run it", "echo hi")
	srv := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		if last := lastMessage(r); last.Role == "user" && last.Content == "what time" {
			return fakeopenai.ToolCalls(fakeopenai.Call{Name: "current_time", Args: `{}`})
		}
		return scripted(r)
	})
	addr := freeAddr(t)
	cfg := strings.Replace(fakeConfig(srv.URL(), "sk-metrics-secret", shellApprove, "info"), `listen: ""`, "listen: "+addr, 1)
	writeFile(t, dir, "config.yaml", cfg)
	p := startBot(t, dir, baseEnv(dir))

	p.send("what time")
	expectLine(t, p, "MODEL:")
	p.send("run it")
	token := expectToken(t, p)
	p.send("/approve " + token)
	expectLine(t, p, "MODEL: the command ran.")

	fams := scrape(t, addr)
	for _, c := range []struct {
		fam    string
		labels map[string]string
	}{
		{"gatehouse_messages_received_total", map[string]string{"gateway": "console"}},
		{"gatehouse_replies_total", map[string]string{"gateway": "console"}},
		{"gatehouse_llm_requests_total", map[string]string{"provider": "fake", "outcome": "ok"}},
		{"gatehouse_llm_request_duration_seconds", map[string]string{"provider": "fake"}},
		{"gatehouse_llm_tokens_total", map[string]string{"provider": "fake", "kind": "prompt"}},
		{"gatehouse_llm_tokens_total", map[string]string{"provider": "fake", "kind": "completion"}},
		{"gatehouse_tool_calls_total", map[string]string{"tool": "current_time", "decision": "allow"}},
		{"gatehouse_tool_calls_total", map[string]string{"tool": "shell", "decision": "approve"}},
		{"gatehouse_tool_duration_seconds", map[string]string{"tool": "current_time"}},
		{"gatehouse_tool_duration_seconds", map[string]string{"tool": "shell"}},
		{"gatehouse_approvals_total", map[string]string{"outcome": "approved"}},
		{"gatehouse_approval_decision_seconds", nil},
	} {
		if v, ok := value(fams, c.fam, c.labels); !ok || v < 1 {
			t.Errorf("%s%v = %v (present %v), want ≥ 1", c.fam, c.labels, v, ok)
		}
	}
	for _, fam := range []string{"gatehouse_queue_depth", "gatehouse_config_last_reload_successful",
		"gatehouse_turn_errors_total", "gatehouse_instance_info", "go_goroutines", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		if _, ok := value(fams, fam, nil); !ok {
			t.Errorf("%s missing", fam)
		}
	}
	_, body := get(addr, "/metrics")
	if strings.Contains(body, "sk-metrics-secret") {
		t.Error("/metrics shows the API key")
	}
	checkWithPromtool(t, body)
	if code, body := get(addr, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with the console reading: %d %s", code, body)
	}
	p.closeInput()
	p.wait()
}

// TestReadyzFollowsTelegramPolling: /readyz is not ready while the fake
// Bot API refuses getUpdates (and then holds the retry), ready once a
// getUpdates is answered; /healthz is live throughout. The refused poll
// counts as a reconnect, and a message counts with the gateway label.
func TestReadyzFollowsTelegramPolling(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{})
	t.Cleanup(tg.Close)
	tg.FailNext("getUpdates", 1, faketg.FaultConflict)
	tg.FailNext("getUpdates", 1, faketg.FaultHang)
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`
gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q, allow: ["42"]}
hitl: {approvers: ["telegram:42"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: %q}
log: {level: info, format: json}
`, tg.Token(), tg.URL(), filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"), addr)
	writeFile(t, dir, "config.yaml", cfg)
	startBot(t, dir, baseEnv(dir))

	// The second getUpdates is being held: none has been answered.
	testutil.WaitFor(t, "the held getUpdates", func() bool { return tg.Calls("getUpdates") >= 2 })
	testutil.WaitFor(t, "/healthz", func() bool { code, _ := get(addr, "/healthz"); return code == http.StatusOK })
	code, body := get(addr, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "telegram") {
		t.Fatalf("/readyz while getUpdates is refused: %d %q; want 503 naming telegram", code, body)
	}
	if strings.Contains(body, tg.Token()) {
		t.Fatalf("/readyz shows the token: %q", body)
	}
	if v, _ := value(scrape(t, addr), "gatehouse_gateway_reconnects_total", map[string]string{"gateway": "telegram"}); v < 1 {
		t.Errorf("reconnects{gateway=telegram} = %v after a refused getUpdates, want ≥ 1", v)
	}

	tg.Release()
	testutil.WaitFor(t, "/readyz ready", func() bool { code, _ := get(addr, "/readyz"); return code == http.StatusOK })

	tg.InjectMessage(faketg.Message{From: &faketg.User{ID: 42}, Chat: faketg.Chat{ID: 42, Type: "private"}, Text: "hello"})
	testutil.WaitFor(t, "a reply on Telegram", func() bool { return len(tg.Sent()) > 0 })
	// The fake has the reply before the bot has its answer and counts it.
	var fams map[string]*dto.MetricFamily
	testutil.WaitFor(t, "the reply counted with the gateway label", func() bool {
		fams = scrape(t, addr)
		for _, fam := range []string{"gatehouse_messages_received_total", "gatehouse_replies_total", "gatehouse_delivery_sent_total"} {
			if v, _ := value(fams, fam, map[string]string{"gateway": "telegram"}); v < 1 {
				return false
			}
		}
		return true
	})
	if _, ok := value(fams, "gatehouse_delivery_failed_total", map[string]string{"gateway": "telegram"}); !ok {
		t.Error("gatehouse_delivery_failed_total{gateway=telegram} missing")
	}
	if _, b := get(addr, "/metrics"); strings.Contains(b, tg.Token()) {
		t.Error("/metrics shows the bot token")
	}
}
