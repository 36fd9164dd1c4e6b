package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeResolver maps host names to addresses without DNS.
type fakeResolver map[string]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := f[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

// publicIP stands for an Internet server; the test dialer sends it to a
// loopback httptest server.
const publicIP = "93.184.216.34"

// testDialer connects publicIP to target and counts dials; dialling any
// other address fails the test, since no real connection may be made.
func testDialer(t *testing.T, target string, dials *atomic.Int32) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		host, _, _ := net.SplitHostPort(addr)
		if host != publicIP && target == "" {
			t.Errorf("dialled %s", addr)
			return nil, errors.New("test dialer: refused")
		}
		if host != publicIP {
			return (&net.Dialer{}).DialContext(ctx, network, addr) // AllowPrivate tests
		}
		return (&net.Dialer{}).DialContext(ctx, network, target)
	}
}

func TestHTTPGetRefusesNonPublic(t *testing.T) {
	var dials atomic.Int32
	tool := NewHTTPGet(HTTPOptions{
		Resolver: fakeResolver{"evil.test": "127.0.0.1", "meta.test": "169.254.169.254", "v6.test": "::1"},
		Dial:     testDialer(t, "", &dials),
	})
	urls := []string{
		"http://127.0.0.1:8080/", "http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/",
		"http://[::1]:9090/metrics", "http://0.0.0.0/", "http://100.64.0.1/", "http://172.16.5.4/",
		"http://192.168.1.1/", "http://[fe80::1]/", "http://[fc00::1]/", "http://224.0.0.1/",
		"http://[::ffff:127.0.0.1]/", "http://[64:ff9b::a00:1]/",
		"http://evil.test/", "http://meta.test/", "https://v6.test/",
	}
	for _, u := range urls {
		out, err := runTool(t, tool, map[string]string{"url": u})
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("%s: got %q, %v; want ErrBlockedAddress", u, out, err)
		}
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d connections attempted", n)
	}
}

func TestHTTPGetRefusesRedirectToPrivate(t *testing.T) {
	var secretHits atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, srv.URL+"/secret", http.StatusFound)
		case "/to-internal":
			http.Redirect(w, r, "http://internal.test/secret", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/secret":
			secretHits.Add(1)
			fmt.Fprint(w, "secret")
		default:
			fmt.Fprint(w, "public page")
		}
	}))
	defer srv.Close()
	var dials atomic.Int32
	tool := NewHTTPGet(HTTPOptions{
		Resolver: fakeResolver{"public.test": publicIP, "internal.test": "10.1.2.3"},
		Dial:     testDialer(t, srv.Listener.Addr().String(), &dials),
	})
	out, err := runTool(t, tool, map[string]string{"url": "http://public.test/"})
	if err != nil || !strings.HasSuffix(out, "\n\npublic page") {
		t.Fatalf("public fetch: %q, %v", out, err)
	}
	for _, path := range []string{"/to-loopback", "/to-internal"} {
		if out, err := runTool(t, tool, map[string]string{"url": "http://public.test" + path}); !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("%s: %q, %v; want ErrBlockedAddress", path, out, err)
		}
	}
	if _, err := runTool(t, tool, map[string]string{"url": "http://public.test/to-file"}); err == nil {
		t.Error("redirect to file: accepted")
	}
	if n := secretHits.Load(); n != 0 {
		t.Errorf("private page served %d times", n)
	}
}

func TestHTTPGetAllowPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(w, strings.Repeat("é", 100))
		case "/bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0, 1, 2, 3})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tool := NewHTTPGet(HTTPOptions{AllowPrivate: true, MaxBytes: 51})
	tests := []struct {
		path, want string
		failed     bool
	}{
		{"/big", "HTTP 200 OK\ncontent-type: text/plain; charset=utf-8\n\n" + strings.Repeat("é", 25) + "\n…[truncated at 50 bytes]", false},
		{"/bin", "HTTP 200 OK\ncontent-type: application/octet-stream\n\n[binary body, 4 bytes read]", false},
		{"/missing", "HTTP 404 Not Found\ncontent-type: text/plain; charset=utf-8\n\n404 page not found\n", true},
	}
	for _, tt := range tests {
		out, err := runTool(t, tool, map[string]string{"url": srv.URL + tt.path})
		if out != tt.want || errors.Is(err, ErrFailed) != tt.failed {
			t.Errorf("%s: %q, %v; want %q failed=%v", tt.path, out, err, tt.want, tt.failed)
		}
	}
}

func TestHTTPGetRefusesSchemes(t *testing.T) {
	tool := NewHTTPGet(HTTPOptions{AllowPrivate: true})
	for _, u := range []string{"file:///etc/passwd", "ftp://example.com/", "gopher://x", "//example.com", "http://"} {
		if _, err := runTool(t, tool, map[string]string{"url": u}); !errors.Is(err, ErrInvalidArgs) {
			t.Errorf("%s: %v; want ErrInvalidArgs", u, err)
		}
	}
}

func TestBlockedAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": false, publicIP: false, "2606:4700::1111": false, "100.128.0.1": false,
		"127.0.0.1": true, "100.127.255.255": true, "::": true, "ff02::1": true, "169.254.0.1": true,
		"2002:7f00:1::": true, "64:ff9b::808:808": false, "255.255.255.255": true,
	} {
		if got := blockedAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("blockedAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}
