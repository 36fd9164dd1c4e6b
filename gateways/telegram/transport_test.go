package telegram

import (
	"net/http"
	"testing"
)

// TestDefaultClientKeepsConnections checks that the default client keeps
// enough idle connections for a burst of sends at the global pace: the
// standard library's default transport keeps 2 a host, and a burst to
// many chats then dialled a new connection for most sends.
func TestDefaultClientKeepsConnections(t *testing.T) {
	c, err := Config{Token: "1:x"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := c.HTTPClient.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("default transport is %T, want *http.Transport", c.HTTPClient.Transport)
	}
	if tr.MaxIdleConnsPerHost < 30 || tr.MaxIdleConns != 0 && tr.MaxIdleConns < tr.MaxIdleConnsPerHost {
		t.Errorf("MaxIdleConnsPerHost = %d, MaxIdleConns = %d: want at least the global pace (30) kept idle", tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
	}
	if tr.Proxy == nil {
		t.Error("the default transport lost the proxy from the environment")
	}
}
