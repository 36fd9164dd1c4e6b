package telegram

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// TestDoctorOnlineDescriptionRedactedBeforeCut: a Bot API server (or a
// proxy before it) whose error description repeats the request path holds
// the token; the description is shown cut to 200 bytes, and the token is
// removed before the cut, so no prefix of it is left where the cut falls
// inside it.
func TestDoctorOnlineDescriptionRedactedBeforeCut(t *testing.T) {
	const tok = "1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]any{ //nolint:errcheck // the test reads the line
			"ok":          false,
			"description": "Not Found: " + strings.Repeat("x", 170) + " " + r.URL.Path,
		})
	}))
	defer srv.Close()
	on := true
	s := &Section{Enable: &on, Token: confkit.Secret(tok), APIURL: srv.URL}
	st := s.DoctorOnline(context.Background(), gateways.Deps{})
	if st.Runs || len(st.Lines) != 1 || !strings.Contains(st.Lines[0], "HTTP 404") {
		t.Fatalf("echoing server: %+v", st)
	}
	if prefix := tok[:14]; strings.Contains(st.Lines[0], prefix) {
		t.Errorf("line %q holds the token's first bytes %q", st.Lines[0], prefix)
	}
}
