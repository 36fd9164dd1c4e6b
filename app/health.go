package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// readyTimeout bounds the store ping of one /readyz.
const readyTimeout = 2 * time.Second

// health serves /healthz (liveness: the process serves HTTP), /readyz
// (every gateway connected and the store answering), /metrics
// (Prometheus text format, from the App's registry) and POST /-/reload.
type health struct {
	metrics  *metrics.Registry
	probe    *storeProbe // the store's ping, cached briefly
	routes   []route
	gateways []gateways.Gateway // those that are gateways.Readier are asked
	ready    atomic.Bool        // Run has started everything
	// reload re-reads the configuration (App.Reload), for POST /-/reload;
	// nil (http.reload false) refuses that request.
	reload func(context.Context) error
	// redact removes the bot's secrets from an error shown over HTTP.
	redact func(string) string
}

func newHealth(m *metrics.Registry, st gateways.Cursors, routes []route, gws []gateways.Gateway) *health {
	return &health{metrics: m, probe: newStoreProbe(st, zerolog.Nop()), routes: routes, gateways: gws}
}

func (h *health) setReady() { h.ready.Store(true) }

func (h *health) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if problems := h.notReady(r.Context()); len(problems) > 0 {
			http.Error(w, "not ready\n"+strings.Join(problems, "\n"), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		h.metrics.WritePrometheus(w) //nolint:errcheck // the scraper sees a cut body
	})
	mux.HandleFunc("POST /-/reload", h.serveReload)
	for _, r := range h.routes {
		mux.Handle(r.pattern, r.handler)
	}
	return mux
}

// serveReload answers POST /-/reload as Prometheus does: 200 on
// success, 500 with the error otherwise; any other method is 405 (the mux
// answers it). It is 403 unless http.reload is on, and for a request a
// browser could send from another site's page (crossSite).
func (h *health) serveReload(w http.ResponseWriter, r *http.Request) {
	if h.reload == nil {
		http.Error(w, "reload over HTTP is off: set http.reload: true to turn it on (SIGHUP reloads either way)", http.StatusForbidden)
		return
	}
	if why := crossSite(r); why != "" {
		http.Error(w, "refused: "+why+": a web page could send this request from another site", http.StatusForbidden)
		return
	}
	if err := h.reload(r.Context()); err != nil {
		http.Error(w, "failed to reload config: "+h.redact(err.Error()), http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, "config reloaded")
}

// notReady lists what keeps the bot from being ready: still starting, a
// gateway not connected (a gateways.Readier's error), a store that does
// not answer a cheap read (the probe's, at most one a second whatever
// the number of probes). Empty means ready.
func (h *health) notReady(ctx context.Context) []string {
	if !h.ready.Load() {
		return []string{"starting"}
	}
	var problems []string
	for _, gw := range h.gateways {
		if r, ok := gw.(gateways.Readier); ok {
			if err := r.Ready(); err != nil {
				problems = append(problems, "gateway "+gw.Name()+": "+err.Error())
			}
		}
	}
	if err := h.probe.check(ctx); err != nil {
		// The error is not shown: a driver's may name its server.
		problems = append(problems, "store: not answering")
	}
	return problems
}

// readyCursor is the cursor key /readyz reads to ping the store; it is
// never written.
const readyCursor = "gatehouse:readyz"

// listen binds http.listen. A port that cannot be bound is an error: a
// health check or webhook pointed at it would otherwise talk to whatever
// holds it, or to nothing, while the bot looks fine.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http.listen %s: %w", addr, err)
	}
	return ln, nil
}

// serve serves on ln until ctx ends, then closes it; it returns once the
// shutdown is over, so nothing of the server outlives it.
func (h *health) serve(ctx context.Context, ln net.Listener, log zerolog.Logger) error {
	srv := gateways.NewHTTPServer(h.handler())
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown) //nolint:errcheck // closing anyway
	}()
	log.Debug().Str("listen", ln.Addr().String()).Msg("health server")
	err := srv.Serve(ln)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http: %w", err) // the shutdown goroutine ends with ctx
	}
	<-shut // ErrServerClosed: the shutdown began, ctx has ended
	return nil
}
