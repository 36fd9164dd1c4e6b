package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// gatewayPath is the REST route discordgo asks for the websocket URL.
const gatewayPath = "/api/v9/gateway"

// rewriter applies api_url and gateway_url to one session's requests,
// leaving discordgo's package-level endpoints alone: every request to
// https://discord.com goes to base instead (scheme, host and path prefix;
// req.Host too), and GET /api/v9/gateway is answered with gatewayURL when
// one is configured.
type rewriter struct {
	base       *url.URL // nil: requests go where discordgo sends them
	gatewayURL string
	next       http.RoundTripper
	// opening, when set, is the context of the GET /api/v9/gateway that
	// discordgo's Open makes without one, so the request ends with the
	// attempt at opening.
	opening func() context.Context
}

// newRewriter returns the transport for apiURL and gatewayURL over next.
func newRewriter(apiURL, gatewayURL string, next http.RoundTripper) (*rewriter, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	t := &rewriter{gatewayURL: gatewayURL, next: next}
	if strings.TrimRight(apiURL, "/") == DefaultAPIURL {
		return t, nil
	}
	u, err := url.Parse(apiURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("discord: api_url %q: want http(s)://host[/prefix]", apiURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	t.base = u
	return t, nil
}

// RoundTrip sends req to the configured API.
func (t *rewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, gatewayPath) {
		if t.gatewayURL != "" {
			return t.gatewayAnswer(req)
		}
		if t.opening != nil {
			req = req.WithContext(t.opening())
		}
	}
	if t.base == nil {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = t.base.Scheme, t.base.Host, t.base.Host
	r.URL.Path = t.base.Path + req.URL.Path
	if req.URL.RawPath != "" {
		r.URL.RawPath = t.base.Path + req.URL.RawPath
	}
	return t.next.RoundTrip(r)
}

// gatewayAnswer is GET /api/v9/gateway's answer naming gateway_url.
func (t *rewriter) gatewayAnswer(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	body, err := json.Marshal(map[string]string{"url": t.gatewayURL})
	if err != nil {
		return nil, fmt.Errorf("discord: gateway_url: %w", err)
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}
