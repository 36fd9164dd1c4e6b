package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/webhooks"
)

// slowStarter opens threads on a fake Slack: its first StartThread waits
// until release is closed, so that a second instance's delivery of the
// same incident comes while the first thread is being opened.
type slowStarter struct {
	mu      sync.Mutex
	opened  int
	started chan struct{} // closed by the first StartThread
	second  chan struct{} // closed by a second StartThread
	release chan struct{}
	notes   []string
}

func (s *slowStarter) ThreadStarter(string) core.ThreadStarter { return s }

func (s *slowStarter) StartThread(_ context.Context, conv core.Conversation, _ string) (core.Conversation, string, error) {
	s.mu.Lock()
	s.opened++
	n := s.opened
	s.mu.Unlock()
	switch n {
	case 1:
		close(s.started)
		<-s.release
	case 2:
		close(s.second)
	}
	conv.Thread = strings.Repeat("1", n) + ".0001"
	return conv, "", nil
}

func (s *slowStarter) Send(_ context.Context, conv core.Conversation, _, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, conv.Key()+" "+text)
	return nil
}

// lookups counts an instance's reads of incident threads: a second read
// means that instance waits for another's thread to be recorded.
type lookups struct {
	*postgres.DB
	mu    sync.Mutex
	n     int
	after chan struct{} // closed at the second read
}

func (l *lookups) WebhookThread(ctx context.Context, hook, incident string) (record.WebhookThread, error) {
	l.mu.Lock()
	l.n++
	if l.n == 2 {
		close(l.after)
	}
	l.mu.Unlock()
	return l.DB.WebhookThread(ctx, hook, incident)
}

// TestIncidentThreadOpenedOnceAcrossInstances: two instances on one
// PostgreSQL store get the first two deliveries of one incident at once.
// The first opens the incident's thread; the second, finding it being
// opened, waits for it and runs in it: one thread, no stray one, both
// turns in it.
func TestIncidentThreadOpenedOnceAcrossInstances(t *testing.T) {
	pgtest.Server(t)
	dsn := pgtest.DSN(t)
	st := &slowStarter{started: make(chan struct{}), second: make(chan struct{}), release: make(chan struct{})}
	hook := webhooks.Hook{Name: "alerts", Format: webhooks.FormatAlertmanager, Secret: "tok", Conv: core.Conversation{Gateway: "slack", Chat: "C0OPS"},
		Prompt: "An alert.", MaxBytes: 1 << 16, Rate: webhooks.Rate{N: 1000, Per: time.Second}}
	rec := &convInbox{}
	var urls []string
	var spy *lookups
	for _, inst := range []string{"a", "b"} {
		db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		var store webhooks.Store = db
		if inst == "b" {
			spy = &lookups{DB: db, after: make(chan struct{})}
			store = spy
		}
		srv := webhooks.New([]webhooks.Hook{hook}, webhooks.Options{Inbox: rec, Store: store, Gateways: st, Instance: inst})
		mux := http.NewServeMux()
		mux.Handle(webhooks.Pattern, srv)
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL)
	}
	post := func(url, fingerprint string) int {
		body := `{"version":"4","groupKey":"{}:{alertname=\"DiskFull\"}","status":"firing","receiver":"gatehouse",` +
			`"alerts":[{"status":"firing","labels":{"alertname":"DiskFull"},"fingerprint":"` + fingerprint + `","startsAt":"2026-01-01T00:00:00Z"}]}`
		for {
			req, _ := http.NewRequest(http.MethodPost, url+"/hooks/alerts", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer tok")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return 0
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				return resp.StatusCode
			}
		}
	}
	codes := make([]int, 2)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); codes[0] = post(urls[0], "aaa") }()
	<-st.started // instance a is opening the incident's thread
	wg.Add(1)
	go func() { defer wg.Done(); codes[1] = post(urls[1], "bbb") }()
	// Instance b either opens a second thread (the defect) or waits,
	// reading the incident's thread again: a is let go in both cases.
	select {
	case <-st.second:
	case <-spy.after:
	}
	close(st.release)
	wg.Wait()
	if codes[0] != http.StatusAccepted || codes[1] != http.StatusAccepted {
		t.Fatalf("answers %v; want 202 both", codes)
	}
	if st.opened != 1 {
		t.Errorf("threads opened %d; want 1 (the second instance waits for the first's)", st.opened)
	}
	testutil.WaitFor(t, "both signals", func() bool { return len(rec.convs()) == 2 })
	convs := rec.convs()
	if convs[0] != convs[1] || convs[0] != "slack:C0OPS:1.0001" {
		t.Errorf("the deliveries ran in %v; want both in slack:C0OPS:1.0001", convs)
	}
}

// convInbox records the conversations of the signals submitted.
type convInbox struct {
	mu sync.Mutex
	c  []string
}

func (c *convInbox) Submit(_ context.Context, s core.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.c = append(c.c, s.Conv.Key())
	return nil
}

func (c *convInbox) convs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.c...)
}
