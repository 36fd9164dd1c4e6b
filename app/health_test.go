package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// pingStore is a store whose cursor reads fail while down is set.
type pingStore struct{ down atomic.Bool }

func (s *pingStore) Cursor(context.Context, string) (string, error) {
	if s.down.Load() {
		return "", errors.New("database is locked: /srv/secret-host/gatehouse.db")
	}
	return "", nil
}

func (s *pingStore) SetCursor(context.Context, string, string) error { return nil }

// readyGateway is a gateway whose Ready returns err while set.
type readyGateway struct{ err atomic.Pointer[error] }

func (g *readyGateway) Name() string                              { return "telegram" }
func (g *readyGateway) Run(context.Context, gateways.Inbox) error { return nil }
func (g *readyGateway) Act(context.Context, core.Action) (core.Result, error) {
	return core.Result{}, nil
}
func (g *readyGateway) Ready() error {
	if p := g.err.Load(); p != nil {
		return *p
	}
	return nil
}

// TestReadyzNeedsTheStoreAndEveryGateway: /readyz is 503 while the bot is
// starting, while a gateway is not connected (named) and while the store
// does not answer (its error, which may name a host or path, not shown);
// 200 once all hold. /healthz is 200 throughout.
func TestReadyzNeedsTheStoreAndEveryGateway(t *testing.T) {
	st, gw := &pingStore{}, &readyGateway{}
	h := newHealth(metrics.New(), st, nil, []gateways.Gateway{gw})
	// The store's ping is kept for probeFresh: the clock moves past it
	// before each change of the store is looked at.
	var clock atomic.Int64
	h.probe.now = func() time.Time { return time.Unix(0, clock.Load()) }
	later := func() { clock.Add(int64(2 * probeFresh)) }
	srv := httptest.NewServer(h.handler())
	t.Cleanup(srv.Close)
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	check := func(what string, wantCode int, wantBody string) {
		t.Helper()
		code, body := get("/readyz")
		if code != wantCode || !strings.Contains(body, wantBody) {
			t.Errorf("/readyz %s: %d %q; want %d with %q", what, code, body, wantCode, wantBody)
		}
		if strings.Contains(body, "secret-host") {
			t.Errorf("/readyz %s shows the store's error: %q", what, body)
		}
		if code, _ := get("/healthz"); code != http.StatusOK {
			t.Errorf("/healthz %s: %d", what, code)
		}
	}

	check("while starting", http.StatusServiceUnavailable, "starting")
	h.setReady()
	check("with everything up", http.StatusOK, "ready")

	st.down.Store(true)
	later()
	check("with the store down", http.StatusServiceUnavailable, "store: not answering")
	st.down.Store(false)
	later()
	check("with the store back", http.StatusOK, "ready")

	notConnected := errors.New("last poll failed")
	gw.err.Store(&notConnected)
	check("with the gateway not connected", http.StatusServiceUnavailable, "gateway telegram: last poll failed")
}
