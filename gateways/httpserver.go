package gateways

import (
	"net/http"
	"time"
)

// The connection timeouts of every HTTP server the bot runs (http.listen,
// a gateway's own webhook listener): a request's headers, the whole request
// with its body (webhook payloads are small), and a keep-alive connection's
// wait for its next request. Without the last two a client that stalls in
// a body, or simply keeps connections open, holds a goroutine and a file
// descriptor each for as long as it likes.
const (
	HTTPReadHeaderTimeout = 5 * time.Second
	HTTPReadTimeout       = 30 * time.Second
	HTTPIdleTimeout       = 2 * time.Minute
)

// NewHTTPServer returns a server for h with those timeouts. No write
// timeout: a webhook handler may wait on a full engine queue, and its
// answer must not be lost to one.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: HTTPReadHeaderTimeout,
		ReadTimeout: HTTPReadTimeout, IdleTimeout: HTTPIdleTimeout}
}
