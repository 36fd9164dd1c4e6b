package mcp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/core/tools/mcp"
	fakemcp "github.com/gatehouse-bot/gatehouse/internal/fake/mcp"
)

// swappable serves the fake through a handler a test replaces, as a
// redeployment replaces a server: the new one knows none of the old
// sessions. It has no standalone SSE stream (405 to the GET), so nothing
// but the call itself meets the new server.
type swappable struct{ h atomic.Pointer[http.Handler] }

func (s *swappable) set(h http.Handler) { s.h.Store(&h) }

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
		return
	}
	(*s.h.Load()).ServeHTTP(w, r)
}

// statusRewriter answers status to instead of from.
type statusRewriter struct {
	http.ResponseWriter
	from, to int
}

func (w statusRewriter) WriteHeader(code int) {
	if code == w.from {
		code = w.to
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w statusRewriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (w statusRewriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func fakeOpts(dir string) fakemcp.Options {
	return fakemcp.Options{Workspace: dir, CallLog: filepath.Join(dir, "calls.jsonl")}
}

// TestApprovedCallReachesARedeployedHTTPServer: the first call to a
// Streamable HTTP server after it was redeployed failed ("sending
// tools/call: Bad Request"; the SDK's own 404 for an unknown session
// ended the same way) and only then was a new session started: a
// person's approval was wasted. A call the server refused for its
// session never ran: it is sent once more, on a new session.
func TestApprovedCallReachesARedeployedHTTPServer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int // the new server's answer to an unknown session
	}{
		{"404 (the Go SDK)", http.StatusNotFound},
		{"400 (as the TypeScript SDK answers)", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after := t.TempDir(), t.TempDir()
			var srv swappable
			srv.set(fakemcp.Handler(fakeOpts(before), "", ""))
			ts := httptest.NewServer(&srv)
			t.Cleanup(ts.Close)
			r := startPinging(t, tools.Options{}, time.Hour, mcp.ServerConfig{Name: "web", URL: ts.URL})
			r.waitTool(t, "mcp__web__write_note")
			next := fakemcp.Handler(fakeOpts(after), "", "")
			srv.set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				next.ServeHTTP(statusRewriter{ResponseWriter: w, from: http.StatusNotFound, to: tc.status}, r)
			}))
			res := r.act(t, "mcp__web__write_note", `{"path":"n.txt","text":"approved"}`)
			if res.Failed {
				t.Errorf("write_note = %+v", res)
			}
			if c := calls(t, before); len(c) != 0 {
				t.Errorf("the old server ran %v", c)
			}
			if c := calls(t, after); len(c) != 1 || c[0]["tool"] != "write_note" {
				t.Errorf("the new server ran %v, want write_note once", c)
			}
		})
	}
}

// TestCallThatMayHaveRunIsNotSentAgain: a call the server may have run
// (a 5xx once it was sent) is not retried.
func TestCallThatMayHaveRunIsNotSentAgain(t *testing.T) {
	dir := t.TempDir()
	h := fakemcp.Handler(fakeOpts(dir), "", "")
	var sent atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			sent.Add(1)
			http.Error(w, "it broke halfway", http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	r := startPinging(t, tools.Options{}, time.Hour, mcp.ServerConfig{Name: "web", URL: ts.URL})
	r.waitTool(t, "mcp__web__write_note")
	if res := r.act(t, "mcp__web__write_note", `{"path":"n.txt","text":"once"}`); !res.Failed {
		t.Errorf("write_note = %+v, want failed", res)
	}
	if n := sent.Load(); n != 1 {
		t.Errorf("tools/call sent %d times, want once", n)
	}
}

// TestListChangedOverHTTP: a Streamable HTTP server's
// notifications/tools/list_changed comes on its own stream (the GET the
// client opens once initialised) and refreshes the tools.
func TestListChangedOverHTTP(t *testing.T) {
	ts := httptest.NewServer(fakemcp.Handler(fakeOpts(t.TempDir()), "", ""))
	t.Cleanup(ts.Close) // after the manager stops (cleanups run last first): its GET stream holds a connection
	r := startPinging(t, tools.Options{}, time.Hour, mcp.ServerConfig{Name: "web", URL: ts.URL})
	r.waitTool(t, "mcp__web__grow")
	if r.has("mcp__web__extra") {
		t.Fatal("extra offered before grow")
	}
	if res := r.act(t, "mcp__web__grow", `{}`); res.Failed {
		t.Fatalf("grow = %+v", res)
	}
	r.waitTool(t, "mcp__web__extra")
	if res := r.act(t, "mcp__web__extra", `{}`); res.Output != "extra here" {
		t.Errorf("extra = %+v", res)
	}
}
