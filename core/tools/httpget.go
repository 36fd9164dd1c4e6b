package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// http_get defaults.
const (
	// HTTPTimeout is http_get's own timeout.
	HTTPTimeout = 30 * time.Second
	// DefaultHTTPMaxBytes caps the body http_get reads.
	DefaultHTTPMaxBytes = 64 << 10
	// maxRedirects bounds the redirects http_get follows.
	maxRedirects = 5
)

// HTTPOptions configure http_get. The zero value refuses non-public
// addresses, reads 64 KiB of body and resolves with the system resolver.
type HTTPOptions struct {
	// AllowPrivate lets http_get reach loopback, private, link-local and
	// other non-public addresses (for a bot that must reach the LAN).
	AllowPrivate bool
	// MaxBytes caps the body read (default 64 KiB).
	MaxBytes int
	// Timeout is the tool's timeout (default 30s).
	Timeout time.Duration
	// Resolver resolves host names (default net.DefaultResolver).
	Resolver Resolver
	// Dial connects to an already checked "ip:port" (default a net.Dialer).
	Dial DialFunc
}

// httpGet is the http_get tool.
type httpGet struct {
	client   *http.Client
	maxBytes int
	timeout  time.Duration
}

// NewHTTPGet returns the http_get tool: a GET of an http or https URL that
// refuses non-public addresses, checked on the resolved address of every
// connection, redirects included.
func NewHTTPGet(o HTTPOptions) Tool {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultHTTPMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = HTTPTimeout
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	dialer := guardedDialer{allowPrivate: o.AllowPrivate, resolver: o.Resolver, dial: o.Dial}
	transport := &http.Transport{
		Proxy:       nil, // a proxy would dial on our behalf, unchecked
		DialContext: dialer.DialContext,
		// HTTP/1.1: the release is built without net/http's HTTP/2
		// (nethttpomithttp2), and every build fetches the same way.
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConns:        8,
		IdleConnTimeout:     30 * time.Second,
	}
	client := &http.Client{Transport: transport, CheckRedirect: checkRedirect}
	return httpGet{client: client, maxBytes: o.MaxBytes, timeout: o.Timeout}
}

// Spec describes http_get.
func (t httpGet) Spec() Spec {
	return Spec{
		Name:        "http_get",
		Description: "Fetch a public http(s) URL.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`),
		ReadOnly:    true,
		Timeout:     t.timeout,
	}
}

// Run fetches the URL. A status of 400 or more is reported through
// ErrFailed with the response.
func (t httpGet) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		URL string `json:"url"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	u, err := checkURL(a.URL)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("http_get: %w", err)
	}
	req.Header.Set("User-Agent", "gatehouse-http_get/1")
	resp, err := t.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("http_get: %w", err)
	}
	defer resp.Body.Close()
	return t.render(resp)
}

// checkURL accepts absolute http and https URLs.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgs, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: only http and https URLs are allowed", ErrInvalidArgs)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%w: URL has no host", ErrInvalidArgs)
	}
	return u, nil
}

// checkRedirect limits redirects and keeps them on http and https; the
// dialer checks each hop's address.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return errors.New("redirect to a non-http URL refused")
	}
	return nil
}

// render writes the status line, the content type and the body as text.
func (t httpGet) render(resp *http.Response) (string, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.maxBytes)+1))
	if err != nil {
		return "", fmt.Errorf("http_get: read body: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %s\ncontent-type: %s\n\n", resp.Status, resp.Header.Get("Content-Type"))
	writeBody(&b, body, t.maxBytes)
	if resp.StatusCode >= 400 {
		return b.String(), fmt.Errorf("%w: %s", ErrFailed, resp.Status)
	}
	return b.String(), nil
}

// writeBody writes body, cut at max bytes with a marker, or a note when it
// is binary.
func writeBody(b *strings.Builder, body []byte, max int) {
	cut := len(body) > max
	if cut {
		body = body[:completeRunes(body[:max])]
	}
	if bytes.IndexByte(body, 0) >= 0 || !utf8.Valid(body[:completeRunes(body)]) {
		fmt.Fprintf(b, "[binary body, %d bytes read]", len(body))
		return
	}
	b.Write(body)
	if cut {
		fmt.Fprintf(b, "\n…[truncated at %d bytes]", len(body))
	}
}
