package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// health serves /healthz (the process is up), /readyz (every component is
// running) and /metrics (Prometheus text format).
type health struct {
	engine   *core.Engine
	routes   []route
	gateways []gateways.Gateway // those that report delivery counters show them
	ready    atomic.Bool
}

func newHealth(e *core.Engine, routes []route, gws []gateways.Gateway) *health {
	return &health{engine: e, routes: routes, gateways: gws}
}

func (h *health) setReady() { h.ready.Store(true) }

func (h *health) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !h.ready.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		st := h.engine.Stats()
		fmt.Fprintf(w, "# TYPE gatehouse_signals_total counter\ngatehouse_signals_total %d\n", st.Signals)
		fmt.Fprintf(w, "# TYPE gatehouse_llm_requests_total counter\ngatehouse_llm_requests_total %d\n", st.LLMRequests)
		fmt.Fprintf(w, "# TYPE gatehouse_tool_calls_total counter\ngatehouse_tool_calls_total %d\n", st.ToolCalls)
		fmt.Fprintf(w, "# TYPE gatehouse_replies_total counter\ngatehouse_replies_total %d\n", st.Replies)
		fmt.Fprintf(w, "# TYPE gatehouse_turn_errors_total counter\ngatehouse_turn_errors_total %d\n", st.TurnErrors)
		h.writeDelivery(w)
	})
	for _, r := range h.routes {
		mux.Handle(r.pattern, r.handler)
	}
	return mux
}

// writeDelivery writes the delivery counters of the gateways that keep
// them, one series per gateway.
func (h *health) writeDelivery(w io.Writer) {
	var names []string
	var stats []gateways.DeliveryStats
	for _, gw := range h.gateways {
		if r, ok := gw.(gateways.DeliveryReporter); ok {
			names, stats = append(names, gw.Name()), append(stats, r.DeliveryStats())
		}
	}
	if len(names) == 0 {
		return
	}
	for _, m := range []struct {
		name string
		get  func(gateways.DeliveryStats) uint64
	}{
		{"gatehouse_delivery_sent_total", func(s gateways.DeliveryStats) uint64 { return s.Sent }},
		{"gatehouse_delivery_edited_total", func(s gateways.DeliveryStats) uint64 { return s.Edited }},
		{"gatehouse_delivery_retried_total", func(s gateways.DeliveryStats) uint64 { return s.Retried }},
		{"gatehouse_delivery_failed_total", func(s gateways.DeliveryStats) uint64 { return s.Failed }},
	} {
		fmt.Fprintf(w, "# TYPE %s counter\n", m.name)
		for i, name := range names {
			fmt.Fprintf(w, "%s{gateway=%q} %d\n", m.name, name, m.get(stats[i]))
		}
	}
}

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

// serve serves on ln until ctx ends, then closes it.
func (h *health) serve(ctx context.Context, ln net.Listener, log zerolog.Logger) error {
	srv := &http.Server{Handler: h.handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown) //nolint:errcheck // closing anyway
	}()
	log.Debug().Str("listen", ln.Addr().String()).Msg("health server")
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http: %w", err)
	}
	return nil
}
