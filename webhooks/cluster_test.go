package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/store/postgres"
	"github.com/gatehouse-bot/gatehouse/webhooks"
)

// countInbox counts the signals submitted.
type countInbox struct{ n *atomic.Int32 }

func (c countInbox) Submit(context.Context, core.Signal) error {
	c.n.Add(1)
	return nil
}

// TestJSONRunsOnceAcrossTwoInstances is issue 31's "a generic json
// delivery with an id runs once across two instances on PostgreSQL
// receiving it concurrently": two servers, each on its own connection to
// one database, get the same delivery 20 times at once, retrying each 503
// as a sender does; exactly one signal is submitted, and every request
// ends 2xx.
func TestJSONRunsOnceAcrossTwoInstances(t *testing.T) {
	pgtest.Server(t)
	dsn := pgtest.DSN(t)
	var submitted atomic.Int32
	hook := webhooks.Hook{Name: "deploys", Format: webhooks.FormatJSON, Secret: "tok", Conv: core.Conversation{Gateway: "console", Chat: "local"},
		Prompt: "A deploy.", MaxBytes: 4096, Rate: webhooks.Rate{N: 1000, Per: time.Second}}
	var urls []string
	for _, inst := range []string{"a", "b"} {
		db, err := postgres.Open(context.Background(), dsn, postgres.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		srv := webhooks.New([]webhooks.Hook{hook}, webhooks.Options{Inbox: countInbox{&submitted}, Store: db, Audit: db, Instance: inst})
		mux := http.NewServeMux()
		mux.Handle(webhooks.Pattern, srv)
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				req, _ := http.NewRequest(http.MethodPost, urls[i%2]+"/hooks/deploys", strings.NewReader(`{"id":"deploy-4711","status":"failed"}`))
				req.Header.Set("Authorization", "Bearer tok")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusServiceUnavailable {
					continue // the sender retries (after Retry-After; at once here)
				}
				if resp.StatusCode/100 != 2 {
					t.Errorf("status %d; want 2xx", resp.StatusCode)
				}
				return
			}
		}()
	}
	wg.Wait()
	if n := submitted.Load(); n != 1 {
		t.Fatalf("signals submitted %d; want 1", n)
	}
}
