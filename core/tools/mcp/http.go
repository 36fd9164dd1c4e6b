package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// Caps of what a Streamable HTTP server's answers may hold: its answers
// come from outside. An answer over a cap ends the session (a start fails
// naming the cap).
const (
	// MaxJSONBody caps an HTTP answer that is not an SSE stream (a JSON
	// answer, an error's body), as a whole.
	MaxJSONBody = 8 << 20
	// MaxSSEEvent caps one event of an SSE stream; a stream holds any
	// number of them.
	MaxSSEEvent = 8 << 20
	// sseSlack is how far past MaxSSEEvent an event is read before the
	// body itself refuses more: readSSE's own check (set to MaxSSEEvent)
	// refuses it first, with its error; the body's is the backstop.
	sseSlack = 64 << 10
)

// errBodyTooLarge is the error of reading an answer past its cap.
var errBodyTooLarge = fmt.Errorf("the server's answer is over the %d MiB an MCP answer may hold", MaxJSONBody>>20)

// headerTransport adds the configured headers to every request to the
// endpoint's scheme and host, and to no other: a redirect elsewhere (which
// the client follows) must not carry the server's credentials, as
// net/http's own Authorization would not.
type headerTransport struct {
	headers map[string]string
	origin  *url.URL // the endpoint; nil (no headers sent) when it does not parse
	base    http.RoundTripper
}

// newHeaderTransport returns a headerTransport for endpoint, parsed once.
func newHeaderTransport(headers map[string]string, endpoint string, base http.RoundTripper) headerTransport {
	origin, err := url.Parse(endpoint)
	if err != nil {
		origin = nil
	}
	return headerTransport{headers: headers, origin: origin, base: base}
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !h.sameOrigin(r.URL) {
		return h.send(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.send(r)
}

// send sends r and bounds the answer (limitResponse) after noting a
// refused session (noteRefusal).
func (h headerTransport) send(r *http.Request) (*http.Response, error) {
	resp, err := h.base.RoundTrip(r)
	return limitResponse(noteRefusal(r, resp, err))
}

// sameOrigin reports whether u has the endpoint's scheme and host (port
// included).
func (h headerTransport) sameOrigin(u *url.URL) bool {
	return h.origin != nil && strings.EqualFold(u.Scheme, h.origin.Scheme) && strings.EqualFold(u.Host, h.origin.Host)
}

// sessionHeader carries a Streamable HTTP session's id.
const sessionHeader = "Mcp-Session-Id"

// sessionProbe, in a call's context, learns whether the server refused
// the call's request for its session: the call never ran.
type sessionProbe struct{ refused atomic.Bool }

type probeKey struct{}

// withProbe returns ctx carrying a new probe.
func withProbe(ctx context.Context) (context.Context, *sessionProbe) {
	p := &sessionProbe{}
	return context.WithValue(ctx, probeKey{}, p), p
}

// noteRefusal tells the probe of r's context, if any, when the server
// refused r for its session: a POST with a session id answered 404 (the
// spec's answer to a session it does not know) or 400 (some SDKs'), whose
// body is not a JSON-RPC answer to the request itself (a request the
// server read and answered may have run). The body is given back whole.
func noteRefusal(r *http.Request, resp *http.Response, err error) (*http.Response, error) {
	p, _ := r.Context().Value(probeKey{}).(*sessionProbe)
	if err != nil || p == nil || r.Method != http.MethodPost || r.Header.Get(sessionHeader) == "" ||
		(resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusBadRequest) {
		return resp, err
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusalPeek))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	var answer struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(head, &answer) == nil && len(answer.ID) > 0 && string(answer.ID) != "null" {
		return resp, nil
	}
	p.refused.Store(true)
	return resp, nil
}

// maxRefusalPeek caps what is read of a 400 or 404 answer to decide
// whether it refused the session.
const maxRefusalPeek = 4 << 10

// limitResponse caps resp's body: an SSE stream per event, anything else
// as a whole.
func limitResponse(resp *http.Response, err error) (*http.Response, error) {
	if err != nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		resp.Body = &limitedBody{rc: resp.Body, limit: MaxSSEEvent + sseSlack, sse: true, lineStart: true}
	} else {
		resp.Body = &limitedBody{rc: resp.Body, limit: MaxJSONBody}
	}
	return resp, nil
}

// limitedBody fails a read once more than limit bytes were read: of the
// whole body, or of an SSE stream since its last event ended (at a blank
// line).
type limitedBody struct {
	rc    io.ReadCloser
	limit int64
	sse   bool

	n         int64 // bytes counted against limit
	lineStart bool  // sse: the next byte starts a line
	afterCR   bool  // sse: the previous byte was '\r' (a '\n' now ends nothing more)
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.n > b.limit {
		return 0, errBodyTooLarge
	}
	n, err := b.rc.Read(p)
	if !b.sse {
		b.n += int64(n)
	} else {
		b.count(p[:n])
	}
	if b.n > b.limit {
		return n, errBodyTooLarge
	}
	return n, err
}

// count counts an SSE stream's bytes since its current event began.
func (b *limitedBody) count(p []byte) {
	for _, c := range p {
		b.n++
		switch {
		case c == '\n' && b.afterCR: // the end of a "\r\n"
			b.afterCR = false
		case c == '\n' || c == '\r':
			if b.lineStart { // a blank line: the event ended
				b.n = 0
			}
			b.lineStart, b.afterCR = true, c == '\r'
		default:
			b.lineStart, b.afterCR = false, false
		}
	}
}

func (b *limitedBody) Close() error { return b.rc.Close() }
