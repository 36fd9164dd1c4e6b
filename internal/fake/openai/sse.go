package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"
)

// sse writes server-sent events, flushing each.
type sse struct {
	w     http.ResponseWriter
	flush func()
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {}
	if f, ok := w.(http.Flusher); ok {
		flush = f.Flush
	}
	return sse{w: w, flush: flush}
}

func (e sse) event(v any) {
	b, _ := json.Marshal(v)
	_, _ = e.w.Write([]byte("data: "))
	_, _ = e.w.Write(b)
	_, _ = e.w.Write([]byte("\n\n"))
	e.flush()
}

func (e sse) done() {
	_, _ = e.w.Write([]byte("data: [DONE]\n\n"))
	e.flush()
}

// chunk sends one delta of choice 0.
func (e sse) chunk(env wireResponse, d *wireAnswerMsg, finish *string) {
	env.Choices = []wireChoice{{Delta: d, FinishReason: finish}}
	e.event(env)
}

// writeStream streams st: a role chunk, the content in several chunks, the
// tool calls' deltas interleaved by index with arguments split across
// chunks, then (when finish) a finish_reason chunk, the usage chunk if
// asked for, and [DONE].
func (s *Server) writeStream(ctx context.Context, w http.ResponseWriter, req Request, st Step, finish bool) {
	e := newSSE(w)
	env := s.envelope(req)
	env.Object = "chat.completion.chunk"
	empty := ""
	e.chunk(env, &wireAnswerMsg{Role: "assistant", Content: &empty}, nil)
	parts := pieces(st.text, 4)
	if st.chunk > 0 {
		parts = pieces(st.text, (len(st.text)+st.chunk-1)/st.chunk)
	}
	for i, p := range parts {
		if i > 0 && st.pause > 0 && !s.wait(ctx, st.pause) {
			return
		}
		e.chunk(env, &wireAnswerMsg{Content: &p}, nil)
	}
	streamCalls(e, env, st.calls)
	if !finish {
		return
	}
	reason := "stop"
	if st.kind == kindToolCalls {
		reason = "tool_calls"
	}
	e.chunk(env, &wireAnswerMsg{}, &reason)
	if req.IncludeUsage {
		env.Usage = usageFor(req, st)
		env.Choices = []wireChoice{}
		e.event(env)
	}
	e.done()
}

// wait pauses for d; false when the request or the server ended first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// streamCalls sends every call's head (id, name) and then the arguments'
// pieces round-robin over the calls, so deltas of different indexes
// interleave as they may with parallel tool calls.
func streamCalls(e sse, env wireResponse, calls []Call) {
	args := make([][]string, len(calls))
	rounds := 0
	for i, c := range calls {
		e.chunk(env, &wireAnswerMsg{ToolCalls: []wireCall{wireToolCall(i, c, "", true)}}, nil)
		args[i] = pieces(c.Args, 3)
		rounds = max(rounds, len(args[i]))
	}
	for r := range rounds {
		for i, c := range calls {
			if r < len(args[i]) {
				e.chunk(env, &wireAnswerMsg{ToolCalls: []wireCall{wireToolCall(i, c, args[i][r], false)}}, nil)
			}
		}
	}
}

// writeCut answers part of a response and drops the connection.
func (s *Server) writeCut(ctx context.Context, w http.ResponseWriter, req Request) {
	if req.Stream {
		s.writeStream(ctx, w, req, Text("this answer is cut off"), false)
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}

// pieces splits s into at most n non-empty parts on rune boundaries.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := max(1, (len(s)+n-1)/n)
	var out []string
	for len(s) > 0 {
		end := min(size, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
