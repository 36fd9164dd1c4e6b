package gateways_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// hits records the requests a test server answered: path and
// Authorization header.
type hits struct {
	mu   sync.Mutex
	reqs []string
}

func (h *hits) add(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reqs = append(h.reqs, r.URL.Path+" auth="+r.Header.Get("Authorization"))
}

func (h *hits) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.reqs...)
}

// errTransport fails every request with err.
type errTransport struct{ err error }

func (t errTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, t.err }

func TestDownload(t *testing.T) {
	const sig = "sig-0123456789-secret"
	const bearer = "Bearer xoxb-download-test"
	errTransportFailed := errors.New("connection refused by the test")

	var otherHits, originHits hits
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.add(r)
		_, _ = w.Write([]byte("elsewhere"))
	}))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		originHits.add(r)
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte("hello"))
		case "/here":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/away":
			http.Redirect(w, r, other.URL+"/stolen?"+sig, http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/long":
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write(bytes.Repeat([]byte("x"), 100))
		case "/chunked":
			for range 4 { // no Content-Length: the body alone passes max
				_, _ = w.Write([]byte("xxxxx"))
				w.(http.Flusher).Flush()
			}
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>sign in</html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer origin.Close()
	o, err := url.Parse(origin.URL)
	if err != nil {
		t.Fatal(err)
	}
	withUser := *o
	withUser.User = url.UserPassword("u", "p")
	refuseHTML := func(r *http.Response) error {
		if strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			return errors.New("a web page, not the file")
		}
		return nil
	}

	for _, tc := range []struct {
		name       string
		url        string
		header     bool
		transport  http.RoundTripper
		check      func(*http.Response) error
		max        int64
		wantErr    string // "" for none
		tooBig     bool
		wantBody   string
		wantOrigin []string // the origin's requests
		wantOther  int      // the other host's requests
	}{
		{name: "ok", url: origin.URL + "/ok?" + sig, header: true, max: 10, wantBody: "hello",
			wantOrigin: []string{"/ok auth=" + bearer}},
		{name: "exactly max", url: origin.URL + "/ok", max: 5, wantBody: "hello", wantOrigin: []string{"/ok auth="}},
		{name: "another host refused before any request", url: other.URL + "/ok?" + sig, header: true, max: 10,
			wantErr: "test: download: not here"},
		{name: "another scheme refused", url: strings.Replace(origin.URL, "http:", "https:", 1) + "/ok", max: 10,
			wantErr: "test: download: not here"},
		{name: "userinfo refused", url: withUser.String() + "/ok", max: 10, wantErr: "test: download: not here"},
		{name: "unparsable refused", url: "http://[::1/ok", max: 10, wantErr: "test: download: not here"},
		{name: "redirect within the origin keeps the header", url: origin.URL + "/here", header: true, max: 10, wantBody: "hello",
			wantOrigin: []string{"/here auth=" + bearer, "/ok auth=" + bearer}},
		{name: "redirect to another host refused, the header not sent there", url: origin.URL + "/away", header: true, max: 10,
			wantErr: "test: download: refusing a redirect of a download to another host", wantOrigin: []string{"/away auth=" + bearer}},
		{name: "too many redirects", url: origin.URL + "/loop", max: 10, wantErr: "test: download: too many redirects",
			wantOrigin: []string{"/loop auth=", "/loop auth=", "/loop auth=", "/loop auth=", "/loop auth="}},
		{name: "status", url: origin.URL + "/missing", max: 10, wantErr: "test: download: HTTP 404", wantOrigin: []string{"/missing auth="}},
		{name: "check refuses", url: origin.URL + "/html", check: refuseHTML, max: 100,
			wantErr: "test: download: a web page, not the file", wantOrigin: []string{"/html auth="}},
		{name: "check passes", url: origin.URL + "/ok", check: refuseHTML, max: 10, wantBody: "hello", wantOrigin: []string{"/ok auth="}},
		{name: "over max by Content-Length", url: origin.URL + "/long", max: 10, tooBig: true,
			wantErr: "test: download: 100 bytes", wantOrigin: []string{"/long auth="}},
		{name: "over max by body", url: origin.URL + "/chunked", max: 10, tooBig: true,
			wantErr: "test: download: more than 10 bytes", wantOrigin: []string{"/chunked auth="}},
		{name: "a url.Error's URL is not in the error", url: origin.URL + "/ok?" + sig, transport: errTransport{errTransportFailed},
			max: 10, wantErr: "test: download: connection refused by the test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			originBefore, otherBefore := len(originHits.list()), len(otherHits.list())
			var h http.Header
			if tc.header {
				h = http.Header{"Authorization": {bearer}}
			}
			var buf bytes.Buffer
			err := gateways.Download(context.Background(), &buf, gateways.DownloadRequest{
				Prefix: "test: download", Origin: &url.URL{Scheme: o.Scheme, Host: o.Host}, OffOrigin: "not here",
				URL: tc.url, Header: h, Transport: tc.transport, Timeout: time.Minute, Max: tc.max, Check: tc.check,
			})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one starting %q", err, tc.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), sig) || strings.Contains(err.Error(), "127.0.0.1")) {
				t.Errorf("the error names the URL: %v", err)
			}
			if errors.Is(err, core.ErrTooBig) != tc.tooBig {
				t.Errorf("error %v: ErrTooBig %v, want %v", err, !tc.tooBig, tc.tooBig)
			}
			if tc.transport != nil && !errors.Is(err, errTransportFailed) {
				t.Errorf("error %v: the transport's error is lost", err)
			}
			if tc.wantErr == "" && buf.String() != tc.wantBody {
				t.Errorf("body %q, want %q", buf.String(), tc.wantBody)
			}
			if tc.tooBig && int64(buf.Len()) > tc.max+1 {
				t.Errorf("%d bytes written past max %d", buf.Len(), tc.max)
			}
			got := originHits.list()[originBefore:]
			if strings.Join(got, "\n") != strings.Join(tc.wantOrigin, "\n") {
				t.Errorf("origin requests %q, want %q", got, tc.wantOrigin)
			}
			if n := len(otherHits.list()) - otherBefore; n != tc.wantOther {
				t.Errorf("the other host had %d requests, want %d", n, tc.wantOther)
			}
		})
	}
}

// TestDownloadScrubs: a transport error goes through Scrub.
func TestDownloadScrubs(t *testing.T) {
	err := gateways.Download(context.Background(), &bytes.Buffer{}, gateways.DownloadRequest{
		Prefix: "test: download", Origin: &url.URL{Scheme: "http", Host: "files.invalid"}, URL: "http://files.invalid/f",
		Transport: errTransport{errors.New("token tok-123 leaked")}, Max: 10,
		Scrub: func(err error) error { return errors.New(strings.ReplaceAll(err.Error(), "tok-123", "[REDACTED]")) },
	})
	if err == nil || err.Error() != "test: download: token [REDACTED] leaked" {
		t.Fatalf("error %v", err)
	}
}
