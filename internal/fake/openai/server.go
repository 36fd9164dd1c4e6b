// Package openai is a loopback fake of the OpenAI chat completions API
// (POST /v1/chat/completions, and POST /v1/audio/transcriptions) for
// tests and benchmarks. It answers from a
// script of steps, one per request, then from a default responder; it
// speaks JSON and server-sent events, and the unhappy paths: error statuses
// with Retry-After, malformed bodies, hangs and cut streams.
//
// Importers alias it, e.g. fakeopenai "github.com/…/internal/fake/openai".
package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DefaultAnswer is the default responder's text.
const DefaultAnswer = "Hello from the fake model."

// Server is the fake API on 127.0.0.1. It is safe for concurrent use.
type Server struct {
	ts        *httptest.Server
	done      chan struct{}
	closeOnce sync.Once
	bytesIn   atomic.Int64
	seq       atomic.Int64

	mu        sync.Mutex
	script    []Step
	responder func(Request) Step
	requests  []Request
	record    bool

	audio transcriber
}

// New starts a fake server that records requests and, with an empty script,
// answers DefaultAnswer.
func New() *Server {
	s := &Server{done: make(chan struct{}), record: true}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve)) // listens on 127.0.0.1
	return s
}

// Start is New for tests: the server closes when tb's test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// URL returns the API base, "http://127.0.0.1:PORT/v1".
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// Close releases hanging requests and stops the server. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.ts.Close()
	})
}

// Push appends steps to the script.
func (s *Server) Push(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
}

// Pending returns how many scripted steps are not yet consumed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Respond sets the responder used when no scripted step matches a
// request; nil restores the default (Text(DefaultAnswer)).
func (s *Server) Respond(f func(Request) Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = f
}

// Record turns recording of requests on (the default) or off. Off, the
// server does not decode bodies beyond the "stream" flag, so benchmarks
// measure the client rather than the fake; responders then see a Request
// with only Stream, BodySize and Authorization set.
func (s *Server) Record(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record = on
}

// Requests returns a copy of the recorded requests, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// BytesReceived returns the total size of all request bodies received.
func (s *Server) BytesReceived() int64 { return s.bytesIn.Load() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		// What `bot doctor --online` asks: the list of models.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model","created":0,"owned_by":"fake"}]}`)
		return
	}
	if r.Method == http.MethodPost && r.URL.Path == "/v1/audio/transcriptions" {
		s.serveTranscription(w, r)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "Unknown request URL: "+r.Method+" "+r.URL.Path, "invalid_request_error", 0)
		return
	}
	body, err := io.ReadAll(r.Body)
	s.bytesIn.Add(int64(len(body)))
	if err != nil {
		return
	}
	req, ok := s.decode(body)
	if !ok {
		writeError(w, http.StatusBadRequest, "We could not parse the JSON body of your request.", "invalid_request_error", 0)
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	st := s.next(req)
	if st.until != nil && !s.hold(r.Context(), st.until) {
		return
	}
	s.answer(w, r, req, st)
}

// hold waits until ready returns true; false when the request or the
// server ended first.
func (s *Server) hold(ctx context.Context, ready func() bool) bool {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !ready() {
		select {
		case <-ctx.Done():
			return false
		case <-s.done:
			return false
		case <-tick.C:
		}
	}
	return true
}

func (s *Server) decode(body []byte) (Request, bool) {
	s.mu.Lock()
	record := s.record
	s.mu.Unlock()
	if !record {
		stream := bytes.Contains(body, []byte(`"stream":true`))
		return Request{Stream: stream, IncludeUsage: stream, BodySize: len(body)}, true
	}
	req, err := decodeRequest(body)
	return req, err == nil
}

// next records req and picks its step: the first matching scripted step,
// else the responder's.
func (s *Server) next(req Request) Step {
	s.mu.Lock()
	if s.record {
		s.requests = append(s.requests, req)
	}
	for i, st := range s.script {
		if st.match == nil || st.match(req) {
			s.script = slices.Delete(s.script, i, i+1)
			s.mu.Unlock()
			return st
		}
	}
	f := s.responder
	s.mu.Unlock()
	if f == nil {
		return Text(DefaultAnswer)
	}
	return f(req)
}
