package llm_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestOpenAIReusesConnectionsOfConcurrentTurns runs two rounds of 8
// requests at once (the engine's default concurrency) and checks that the
// second round dials no new connection: the default client keeps them
// all idle between rounds (the standard library's default keeps 2).
func TestOpenAIReusesConnectionsOfConcurrentTurns(t *testing.T) {
	const turns = 8
	var dials atomic.Int64
	inFlight := make(chan struct{}, turns)
	release := make(chan struct{})
	var releaseMu sync.Mutex
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		releaseMu.Lock()
		ch := release // this round's, taken before the round can be released
		releaseMu.Unlock()
		inFlight <- struct{}{}
		select { // every request of the round is in flight at once, each on its own connection
		case <-ch:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	p := newOpenAI(t, srv.URL+"/v1", false)

	round := func() {
		var wg sync.WaitGroup
		for range turns {
			wg.Go(func() {
				if _, err := p.Complete(context.Background(), userReq("hi")); err != nil {
					t.Errorf("Complete: %v", err)
				}
			})
		}
		for range turns {
			select {
			case <-inFlight:
			case <-time.After(10 * time.Second):
				t.Fatal("hang guard: requests did not arrive")
			}
		}
		releaseMu.Lock()
		close(release)
		release = make(chan struct{})
		releaseMu.Unlock()
		wg.Wait()
	}
	round()
	first := dials.Load()
	if first != turns {
		t.Fatalf("first round dialled %d connections, want %d (one per concurrent request)", first, turns)
	}
	round()
	if again := dials.Load() - first; again != 0 {
		t.Errorf("second round dialled %d new connections, want 0: idle connections were not kept", again)
	}
}
