package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/core/tools"
)

// maxSessionID caps the session id a server gives (sent back with every
// request); the spec allows only visible ASCII in it.
const maxSessionID = 1024

// versionHeader carries the protocol version agreed at initialisation.
const versionHeader = "MCP-Protocol-Version"

// httpTransport speaks Streamable HTTP: each message is POSTed, and a
// request's answer comes as JSON or as an SSE stream that may carry the
// server's notifications and requests before it. Once initialised, a GET
// opens the server's own stream (its notifications), if it offers one.
type httpTransport struct {
	c      *conn
	url    string
	client *http.Client

	mu      sync.Mutex
	session string // Mcp-Session-Id, from the answer to initialize
	version string // the protocol version agreed

	listening sync.WaitGroup
}

func newHTTPTransport(c *conn, url string, client *http.Client) *httpTransport {
	t := &httpTransport{c: c, url: url, client: client}
	c.t = t
	return t
}

// request makes a request to the endpoint with the session's headers.
func (t *httpTransport) request(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	t.mu.Lock()
	if t.session != "" {
		req.Header.Set(sessionHeader, t.session)
	}
	if t.version != "" {
		req.Header.Set(versionHeader, t.version)
	}
	t.mu.Unlock()
	return req, nil
}

// send POSTs msg and, for a request, reads its answer (see transport).
// An answer over its cap ends the session.
func (t *httpTransport) send(ctx context.Context, msg []byte, id int64) error {
	err := t.post(ctx, msg, id)
	if errors.Is(err, errBodyTooLarge) || errors.Is(err, errEventTooLarge) {
		t.c.end(err)
	}
	return err
}

func (t *httpTransport) post(ctx context.Context, msg []byte, id int64) error {
	req, err := t.request(ctx, http.MethodPost, msg)
	if err != nil {
		return err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if s := resp.Header.Get(sessionHeader); s != "" {
		t.mu.Lock()
		known := t.session != ""
		if !known && validSessionID(s) {
			t.session = s
		}
		t.mu.Unlock()
		if !known && !validSessionID(s) {
			return fmt.Errorf("the server's session id (%d bytes) is not at most %d visible ASCII characters", len(s), maxSessionID)
		}
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		if id > 0 {
			return errNoAnswer
		}
		return nil
	}
	if resp.StatusCode/100 != 2 {
		return statusError(resp)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream":
		return t.readStream(resp.Body, id)
	case mt == "application/json":
		body, err := io.ReadAll(resp.Body) // capped by limitResponse
		if err != nil {
			return fmt.Errorf("reading the server's answer: %w", err)
		}
		if t.c.deliver(body, id) || id == 0 {
			return nil
		}
		return errNoAnswer
	case id == 0:
		return nil
	}
	return fmt.Errorf("the server answered with content type %q, not JSON or an SSE stream", tools.Truncate(mt, 80))
}

// validSessionID reports whether s is a session id this client sends
// back: at most maxSessionID characters from '!' to '~'.
func validSessionID(s string) bool {
	if len(s) > maxSessionID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// statusError names an HTTP answer that is not a success, with the start
// of its body (the server's words, untrusted).
func statusError(resp *http.Response) error {
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorText))
	if text := strings.TrimSpace(string(head)); text != "" {
		return fmt.Errorf("HTTP %s: %s", resp.Status, text)
	}
	return fmt.Errorf("HTTP %s", resp.Status)
}

// readStream hands the messages of an SSE stream to the conn until the
// answer to id came (id > 0) or the stream ended.
func (t *httpTransport) readStream(body io.Reader, id int64) error {
	answered := false
	err := readSSE(body, MaxSSEEvent, func(event string, data []byte) bool {
		if event == "" || event == "message" {
			answered = t.c.deliver(data, id)
		}
		return !answered
	})
	switch {
	case answered || (err == nil && id == 0):
		return nil
	case err != nil:
		return fmt.Errorf("reading the server's answer: %w", err)
	}
	return errNoAnswer
}

// Bounds of the server's own stream: how long to wait before opening it
// again, and how many failures in a row give it up (pings still tell
// whether the server lives).
const (
	listenRetry    = time.Second
	listenFailures = 3
)

// listen opens the server's own stream (GET) and reads its messages
// until the conn ends; a server without one (405) is left alone.
func (t *httpTransport) listen() {
	t.listening.Go(func() {
		ctx := t.c.ctx
		for failures := 0; failures < listenFailures && ctx.Err() == nil; {
			again, err := t.listenOnce(ctx)
			if !again {
				return
			}
			if err != nil {
				failures++
				t.c.log.Debug().Err(err).Msg("mcp server's own stream failed")
			} else {
				failures = 0
			}
			select {
			case <-ctx.Done():
			case <-time.After(listenRetry):
			}
		}
	})
}

// listenOnce reads the server's stream once; again is false when the
// server has none.
func (t *httpTransport) listenOnce(ctx context.Context) (again bool, err error) {
	req, err := t.request(ctx, http.MethodGet, nil)
	if err != nil {
		return false, err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusMethodNotAllowed {
		return false, nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || mt != "text/event-stream" {
		return true, statusError(resp)
	}
	err = t.readStream(resp.Body, 0)
	if errors.Is(err, errBodyTooLarge) || errors.Is(err, errEventTooLarge) {
		t.c.end(err)
		return false, err
	}
	return true, err
}

// close ends the server's stream and the session (DELETE, as the spec
// asks; a server that does not allow it is fine).
func (t *httpTransport) close() error {
	t.listening.Wait() // the conn ended first: its context ended the GET
	t.mu.Lock()
	session := t.session
	t.mu.Unlock()
	if session == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), terminateGrace)
	defer cancel()
	req, err := t.request(ctx, http.MethodDelete, nil)
	if err != nil {
		return err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("ending the session: %w", err)
	}
	resp.Body.Close()
	return nil
}
