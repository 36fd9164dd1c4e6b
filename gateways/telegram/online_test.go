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

// TestDoctorOnlineNamesARefusedToken: a token the Bot API refuses (401)
// is named by its key and variable, never shown.
func TestDoctorOnlineNamesARefusedToken(t *testing.T) {
	const tok = "1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"}) //nolint:errcheck // the test reads the line
	}))
	defer srv.Close()
	on := true
	s := &Section{Enable: &on, Token: confkit.Secret(tok), APIURL: srv.URL}
	st := s.DoctorOnline(context.Background(), gateways.Deps{})
	if st.Runs || len(st.Lines) != 1 || !strings.Contains(st.Lines[0], "gateways.telegram.token (TELEGRAM_BOT_TOKEN): Unauthorized") {
		t.Fatalf("refused token: %+v", st)
	}
	if strings.Contains(st.Lines[0], tok[11:]) {
		t.Errorf("line %q holds the token", st.Lines[0])
	}
}

// TestDoctorTokenShape: a token without the shape @BotFather gives
// (id:35 characters) is a problem naming the key, without the token.
func TestDoctorTokenShape(t *testing.T) {
	for tok, ok := range map[string]bool{
		"1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0": true,
		"1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw":  false, // 34: cut short
		"bot1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDs": false,
		"xoxb-1-a-slack-token":                           false,
		"1234567890 AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0": false,
	} {
		s := NewSection()
		s.Token = confkit.Secret(tok)
		st := s.Doctor()
		if !st.Runs || (len(st.Problems) == 0) != ok {
			t.Errorf("token %q: Doctor() = %+v; want a problem: %v", tok, st, !ok)
			continue
		}
		if !ok && (!strings.Contains(st.Problems[0], "gateways.telegram.token (TELEGRAM_BOT_TOKEN): not a Telegram bot token") || strings.Contains(st.Problems[0], tok)) {
			t.Errorf("problem %q: want the key named and no token", st.Problems[0])
		}
	}
}
