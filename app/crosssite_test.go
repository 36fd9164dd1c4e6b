package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// TestReloadEndpoint: POST /-/reload is 403 when http.reload is off, and
// when on, for every request a browser could send from another site's
// page; a plain POST reloads.
func TestReloadEndpoint(t *testing.T) {
	for _, c := range []struct {
		name   string
		on     bool
		header []string
		want   int
	}{
		{"off", false, nil, http.StatusForbidden},
		{"curl", true, nil, http.StatusOK},
		{"json", true, []string{"Content-Type", "application/json"}, http.StatusOK},
		{"typed address", true, []string{"Sec-Fetch-Site", "none"}, http.StatusOK},
		{"same origin", true, []string{"Sec-Fetch-Site", "same-origin"}, http.StatusOK},
		{"cross-site", true, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"same-site", true, []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"origin", true, []string{"Origin", "https://example.com"}, http.StatusForbidden},
		{"empty origin", true, []string{"Origin", ""}, http.StatusForbidden},
		{"text/plain", true, []string{"Content-Type", "text/plain; charset=utf-8"}, http.StatusForbidden},
		{"form", true, []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusForbidden},
		{"multipart", true, []string{"Content-Type", "multipart/form-data; boundary=b"}, http.StatusForbidden},
		{"unreadable type", true, []string{"Content-Type", "application/json; ;;"}, http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHealth(metrics.New(), &pingStore{}, nil, nil)
			h.redact = func(s string) string { return s }
			reloads := 0
			if c.on {
				h.reload = func(context.Context) error { reloads++; return nil }
			}
			req := httptest.NewRequest(http.MethodPost, "/-/reload", nil)
			for i := 0; i+1 < len(c.header); i += 2 {
				req.Header.Set(c.header[i], c.header[i+1])
			}
			rec := httptest.NewRecorder()
			h.handler().ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Errorf("%d %q, want %d", rec.Code, rec.Body, c.want)
			}
			if want := map[bool]int{true: 1}[c.want == http.StatusOK]; reloads != want {
				t.Errorf("%d reloads, want %d", reloads, want)
			}
		})
	}
}
