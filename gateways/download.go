package gateways

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// maxDownloadRedirects bounds a download's redirects: the request that
// would be the next after this many is refused.
const maxDownloadRedirects = 5

// DownloadRequest is one attachment download: a GET of URL, sent only to
// Origin (redirects included), its body copied up to Max bytes.
type DownloadRequest struct {
	// Prefix starts every error ("<platform>: download").
	Prefix string
	// Origin is the only scheme and host the request and its redirects
	// may go to; a URL elsewhere (or with userinfo) is refused before any
	// request.
	Origin *url.URL
	// OffOrigin is the error text (after Prefix) for a URL not on Origin;
	// default "the URL is not on the file host; not fetched".
	OffOrigin string
	// URL is the file's URL. It may hold a token or a signature, so it
	// never appears in an error.
	URL string
	// Header is added to the request (a bearer token); it goes nowhere
	// but Origin. Without an Authorization header here, none is sent on a
	// redirect either.
	Header http.Header
	// Transport makes the request; nil is http.DefaultTransport.
	Transport http.RoundTripper
	// Timeout bounds the whole download; zero leaves ctx's deadline alone.
	Timeout time.Duration
	// Max is the most bytes written to w; more is core.ErrTooBig.
	Max int64
	// Check, when set, refuses a 200 response before its body is read
	// (its error follows Prefix).
	Check func(*http.Response) error
	// Scrub, when set, removes secrets from a transport or body error.
	Scrub func(error) error
}

// Download fetches req.URL into w: refused before any request when the URL
// is not on req.Origin, a redirect followed only within it (at most 5
// requests in all), any status but 200 an error, and more than req.Max
// bytes core.ErrTooBig (by Content-Length before the body is read, or once
// the body passes it).
// No error holds the URL.
func Download(ctx context.Context, w io.Writer, req DownloadRequest) error {
	off := req.OffOrigin
	if off == "" {
		off = "the URL is not on the file host; not fetched"
	}
	u, err := url.Parse(req.URL)
	if err != nil || req.Origin == nil || u.Scheme != req.Origin.Scheme || u.Host != req.Origin.Host || u.User != nil {
		return fmt.Errorf("%s: %s", req.Prefix, off)
	}
	scrub := req.Scrub
	if scrub == nil {
		scrub = func(err error) error { return err }
	}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("%s: bad URL", req.Prefix)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	resp, err := downloadClient(req).Do(hreq)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL may hold a token or a signature
		}
		return fmt.Errorf("%s: %w", req.Prefix, scrub(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", req.Prefix, resp.StatusCode)
	}
	if req.Check != nil {
		if err := req.Check(resp); err != nil {
			return fmt.Errorf("%s: %w", req.Prefix, err)
		}
	}
	if resp.ContentLength > req.Max {
		return fmt.Errorf("%s: %d bytes: %w", req.Prefix, resp.ContentLength, core.ErrTooBig)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, req.Max+1))
	if n > req.Max {
		return fmt.Errorf("%s: more than %d bytes: %w", req.Prefix, req.Max, core.ErrTooBig)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", req.Prefix, scrub(err))
	}
	return nil
}

// downloadClient is a client on req's transport that follows a redirect
// only within req.Origin, at most maxDownloadRedirects times.
func downloadClient(req DownloadRequest) *http.Client {
	next := req.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	keepAuth := req.Header.Get("Authorization") != ""
	return &http.Client{Transport: next, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= maxDownloadRedirects {
			return errors.New("too many redirects")
		}
		if r.URL.Scheme != req.Origin.Scheme || r.URL.Host != req.Origin.Host {
			return errors.New("refusing a redirect of a download to another host")
		}
		if !keepAuth {
			r.Header.Del("Authorization")
		}
		return nil
	}}
}

// NewTransport is http.DefaultTransport (proxy from the environment,
// timeouts) keeping idlePerHost idle connections per host. The release
// speaks HTTP/1.1 only (built with nethttpomithttp2), one request at a
// time on a connection, and the standard library's default of 2 idle
// connections would make a burst of sends to one API dial a new
// connection for most of them; a platform's default client keeps as many
// as its overall pace allows a second.
func NewTransport(idlePerHost int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(idlePerHost, http.DefaultMaxIdleConnsPerHost)
	return t
}
