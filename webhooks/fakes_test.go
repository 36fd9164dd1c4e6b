package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// memStore is an in-memory Store.
type memStore struct {
	mu         sync.Mutex
	deliveries map[string]bool // hook\x00id → done
	threads    map[string]record.WebhookThread
}

func newMemStore() *memStore {
	return &memStore{deliveries: map[string]bool{}, threads: map[string]record.WebhookThread{}}
}

func (m *memStore) ClaimWebhookDelivery(_ context.Context, hook, id, _ string, _ time.Duration) (record.WebhookClaim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	done, ok := m.deliveries[hook+"\x00"+id]
	switch {
	case !ok:
		m.deliveries[hook+"\x00"+id] = false
		return record.WebhookTaken, nil
	case done:
		return record.WebhookDuplicate, nil
	}
	return record.WebhookBusy, nil
}

func (m *memStore) FinishWebhookDelivery(_ context.Context, hook, id, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deliveries[hook+"\x00"+id] = true
	return nil
}

func (m *memStore) ReleaseWebhookDelivery(_ context.Context, hook, id, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.deliveries, hook+"\x00"+id)
	return nil
}

func (m *memStore) WebhookThread(_ context.Context, hook, incident string) (record.WebhookThread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.threads[hook+"\x00"+incident], nil
}

func (m *memStore) ClaimWebhookThread(_ context.Context, hook, incident, instance string, _ time.Duration) (record.WebhookThread, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.threads[hook+"\x00"+incident]; ok {
		return t, false, nil
	}
	m.threads[hook+"\x00"+incident] = record.WebhookThread{Opener: instance}
	return record.WebhookThread{Opener: instance}, true, nil
}

func (m *memStore) SetWebhookThread(_ context.Context, hook, incident, instance string, t record.WebhookThread) (record.WebhookThread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.threads[hook+"\x00"+incident]; cur.Conv == "" && cur.Opener == instance {
		m.threads[hook+"\x00"+incident] = record.WebhookThread{Conv: t.Conv, ReplyTo: t.ReplyTo}
	}
	return m.threads[hook+"\x00"+incident], nil
}

func (m *memStore) ReleaseWebhookThread(_ context.Context, hook, incident, instance string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.threads[hook+"\x00"+incident]; cur.Conv == "" && cur.Opener == instance {
		delete(m.threads, hook+"\x00"+incident)
	}
	return nil
}

func (m *memStore) stored() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.deliveries)
}

// recorder is the Inbox and the Gateways: signals, threads opened, notes.
type recorder struct {
	mu      sync.Mutex
	signals []core.Signal
	opened  []string
	notes   []string
	fail    error
}

func (r *recorder) Submit(_ context.Context, s core.Signal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.signals = append(r.signals, s)
	return nil
}

func (r *recorder) ThreadStarter(gateway string) core.ThreadStarter {
	if gateway != "slack" && gateway != "telegram" {
		return nil
	}
	return r
}

func (r *recorder) StartThread(_ context.Context, conv core.Conversation, text string) (core.Conversation, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opened = append(r.opened, text)
	if conv.Gateway == "telegram" { // a chat without topics: a reply chain
		return conv, fmt.Sprint(len(r.opened)), nil
	}
	conv.Thread = fmt.Sprintf("%d.0001", len(r.opened))
	return conv, "", nil
}

func (r *recorder) Send(_ context.Context, conv core.Conversation, replyTo, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if replyTo != "" {
		text = "↩" + replyTo + " " + text
	}
	r.notes = append(r.notes, conv.Key()+" "+text)
	return nil
}

func (r *recorder) got() []core.Signal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]core.Signal(nil), r.signals...)
}

// harness is a Server on an httptest server with one hook of each format.
type harness struct {
	srv   *Server
	url   string
	store *memStore
	rec   *recorder
}

const testSecret = "s3cret-token"

func testHooks() []Hook {
	conv := core.Conversation{Gateway: "slack", Chat: "C0OPS"}
	return []Hook{
		{Name: "alerts", Format: FormatAlertmanager, Secret: testSecret, Conv: conv, Prompt: "An alert changed state.",
			Events: []string{"firing"}, MaxBytes: 4096, Rate: Rate{N: 1000, Per: time.Second}},
		{Name: "gh", Format: FormatGitHub, Secret: testSecret, Conv: conv, Prompt: "GitHub says.",
			Events: []string{"pull_request", "workflow_run"}, MaxBytes: DefaultMaxBytes, Rate: Rate{N: 1000, Per: time.Second}},
		{Name: "any", Format: FormatJSON, Secret: testSecret, Conv: core.Conversation{Gateway: "console", Chat: "local"},
			Prompt: "Something happened.", MaxBytes: 4096, Rate: Rate{N: 2, Per: time.Minute}},
	}
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{store: newMemStore(), rec: &recorder{}}
	h.srv = New(testHooks(), Options{Inbox: h.rec, Store: h.store, Gateways: h.rec, Instance: "a"})
	mux := http.NewServeMux()
	mux.Handle(Pattern, h.srv)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	h.url = ts.URL
	return h
}

// post sends body to /hooks/name with the headers, and returns the status.
func (h *harness) post(t *testing.T, name, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+"/hooks/"+name, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func bearer() map[string]string { return map[string]string{"Authorization": "Bearer " + testSecret} }

var errFake = fmt.Errorf("fake failure")
