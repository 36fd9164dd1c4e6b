package mcp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// An SSE stream may hold any number of events: only one event past the
// limit is refused, whatever its line endings.
func TestLimitedBodyCountsSSEEventsOneByOne(t *testing.T) {
	const limit = 64 << 10
	for _, nl := range []string{"\n", "\r\n", "\r"} {
		event := "event: message" + nl + "data: " + strings.Repeat("x", 1<<10) + nl + nl
		stream := strings.Repeat(event, 16*limit/len(event))
		b := &limitedBody{rc: io.NopCloser(strings.NewReader(stream)), limit: limit, sse: true, lineStart: true}
		if n, err := io.Copy(io.Discard, b); err != nil || n != int64(len(stream)) {
			t.Errorf("%q: read %d of %d bytes of small events: %v", nl, n, len(stream), err)
		}
		huge := "data: " + strings.Repeat("x", 1<<10) + nl // one event of many lines
		b = &limitedBody{rc: io.NopCloser(strings.NewReader(strings.Repeat(huge, 2*limit/len(huge)))), limit: limit, sse: true, lineStart: true}
		if _, err := io.Copy(io.Discard, b); !errors.Is(err, errBodyTooLarge) {
			t.Errorf("%q: one huge event read: %v", nl, err)
		}
	}
}

// Only a 404 or 400 to a POST with a session id that does not answer the
// request itself is a refused session; the body is read back whole.
func TestNoteRefusal(t *testing.T) {
	for _, tc := range []struct {
		name, method, session string
		status                int
		body                  string
		refused               bool
	}{
		{"404 text (the Go SDK)", "POST", "s1", 404, "session not found\n", true},
		{"400 text", "POST", "s1", 400, "Bad Request", true},
		{"400 JSON-RPC, no id (TypeScript SDK)", "POST", "s1", 400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`, true},
		{"404 JSON-RPC answer to the call", "POST", "s1", 404, `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method"}}`, false},
		{"400 JSON-RPC answer to the call", "POST", "s1", 400, `{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad params"}}`, false},
		{"500", "POST", "s1", 500, "boom", false},
		{"200", "POST", "s1", 200, `{}`, false},
		{"no session yet", "POST", "", 404, "not found", false},
		{"GET", "GET", "s1", 404, "session not found", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, p := withProbe(context.Background())
			req, _ := http.NewRequestWithContext(ctx, tc.method, "http://mcp.test/", nil)
			if tc.session != "" {
				req.Header.Set(sessionHeader, tc.session)
			}
			resp := &http.Response{StatusCode: tc.status, Body: io.NopCloser(strings.NewReader(tc.body))}
			resp, err := noteRefusal(req, resp, nil)
			if err != nil || p.refused.Load() != tc.refused {
				t.Errorf("refused %v, %v; want %v", p.refused.Load(), err, tc.refused)
			}
			if b, _ := io.ReadAll(resp.Body); string(b) != tc.body {
				t.Errorf("body %q, want %q", b, tc.body)
			}
		})
	}
}
