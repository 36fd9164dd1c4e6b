package gatewaytest

import (
	"net/http"
	"testing"
)

// KeepsIdleConnections fails t unless client's transport is an
// *http.Transport with the proxy from the environment that keeps at least
// n idle connections to one host: the release speaks HTTP/1.1 (built with
// nethttpomithttp2), one request at a time on a connection, and the
// standard library's default of 2 made a burst of sends dial a new
// connection for most of them.
func KeepsIdleConnections(t testing.TB, client *http.Client, n int) {
	t.Helper()
	tr, ok := client.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("default transport is %T, want *http.Transport", client.Transport)
	}
	if tr.MaxIdleConnsPerHost < n || tr.MaxIdleConns != 0 && tr.MaxIdleConns < tr.MaxIdleConnsPerHost {
		t.Errorf("MaxIdleConnsPerHost = %d, MaxIdleConns = %d: want at least the global pace (%d) kept idle", tr.MaxIdleConnsPerHost, tr.MaxIdleConns, n)
	}
	if tr.Proxy == nil {
		t.Error("the default transport lost the proxy from the environment")
	}
}
