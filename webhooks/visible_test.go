package webhooks

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/metrics"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

type auditLog struct {
	mu      sync.Mutex
	entries []record.AuditEntry
}

func (a *auditLog) AppendAudit(_ context.Context, e record.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

// TestOutcomesCountedAuditedAndListed: every outcome is counted by webhook
// in the metrics, each accepted delivery is audited with its identity,
// and /status lists the webhooks with their last delivery and counts;
// the secret and the body are in none of them.
func TestOutcomesCountedAuditedAndListed(t *testing.T) {
	reg := metrics.New()
	audit := &auditLog{}
	rec := &recorder{}
	srv := New(testHooks(), Options{Inbox: rec, Store: newMemStore(), Audit: audit, Gateways: rec, Metrics: reg, Instance: "a"})
	mux := http.NewServeMux()
	mux.Handle(Pattern, srv)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	h := &harness{srv: srv, url: ts.URL}
	h.post(t, "alerts", amFiring, bearer())
	h.post(t, "alerts", amFiring, bearer())
	h.post(t, "alerts", amFiring, nil)
	h.post(t, "alerts", "{", bearer())
	h.post(t, "alerts", strings.Repeat("x", 5000), bearer())
	h.post(t, "nope", amFiring, bearer())
	var out bytes.Buffer
	if err := reg.WritePrometheus(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`gatehouse_webhook_deliveries_total{webhook="alerts",outcome="accepted"} 1`,
		`gatehouse_webhook_deliveries_total{webhook="alerts",outcome="duplicate"} 1`,
		`gatehouse_webhook_deliveries_total{webhook="alerts",outcome="unauthorized"} 1`,
		`gatehouse_webhook_deliveries_total{webhook="alerts",outcome="bad_request"} 1`,
		`gatehouse_webhook_deliveries_total{webhook="alerts",outcome="too_large"} 1`,
		`gatehouse_webhook_deliveries_total{webhook="",outcome="unknown"} 1`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if len(audit.entries) != 1 {
		t.Fatalf("audit entries %d; want 1", len(audit.entries))
	}
	e := audit.entries[0]
	if e.Tool != "webhook" || e.Outcome != "accepted" || e.RequestedBy != "webhook:alerts" || !strings.HasPrefix(e.Detail, "am:") ||
		e.Conv != "slack:C0OPS:1.0001" {
		t.Errorf("audit entry %+v", e)
	}
	status := strings.Join(srv.StatusLines(context.Background(), rec.got()[0].Conv), "\n")
	for _, want := range []string{"alerts (alertmanager) → slack:C0OPS", "accepted 1", "duplicate 1", "unauthorized 1", "gh (github)", "no delivery yet"} {
		if !strings.Contains(status, want) {
			t.Errorf("/status lacks %q:\n%s", want, status)
		}
	}
	for _, leak := range []string{testSecret, "disk 95% full"} {
		if strings.Contains(out.String()+status+e.Args, leak) {
			t.Errorf("%q shown in the metrics, /status or the audit", leak)
		}
	}
}

// TestMalformedLoggedWithoutBody: a signed body that is not JSON gets 400
// and a log line without the body; an unsigned one is not logged at all.
func TestMalformedLoggedWithoutBody(t *testing.T) {
	var logs syncBuf
	rec := &recorder{}
	srv := New(testHooks(), Options{Inbox: rec, Store: newMemStore(), Gateways: rec, Instance: "a", Log: zerolog.New(&logs)})
	mux := http.NewServeMux()
	mux.Handle(Pattern, srv)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	h := &harness{srv: srv, url: ts.URL}
	if got := h.post(t, "alerts", "BODY-MARKER not json", bearer()).StatusCode; got != http.StatusBadRequest {
		t.Fatalf("signed garbage: %d; want 400", got)
	}
	h.post(t, "alerts", "UNSIGNED-MARKER", nil)
	out := logs.String()
	if !strings.Contains(out, "not a payload") {
		t.Errorf("no log line for the malformed delivery:\n%s", out)
	}
	for _, leak := range []string{"BODY-MARKER", "UNSIGNED-MARKER", testSecret} {
		if strings.Contains(out, leak) {
			t.Errorf("the log shows %q:\n%s", leak, out)
		}
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
