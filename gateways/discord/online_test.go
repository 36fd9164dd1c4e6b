package discord

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
)

// TestDoctorOnline: a live fake answers users/@me, a dead one fails; no
// line holds the token.
func TestDoctorOnline(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	on := true
	s := &Section{Enable: &on, Token: confkit.Secret(fake.Token()), APIURL: fake.URL()}
	st := s.DoctorOnline(context.Background(), gateways.Deps{})
	if !st.Runs || len(st.Lines) != 1 || !strings.Contains(st.Lines[0], "users/@me ok") {
		t.Fatalf("live fake: %+v", st)
	}
	fake.Close()
	st = s.DoctorOnline(context.Background(), gateways.Deps{})
	if st.Runs || len(st.Lines) != 1 || !strings.Contains(st.Lines[0], "failed") {
		t.Fatalf("dead fake: %+v", st)
	}
	for _, l := range st.Lines {
		if strings.Contains(l, fake.Token()) {
			t.Errorf("token in %q", l)
		}
	}
}

// TestDoctorOnlineErrorBodyRedactedBeforeCut: an error body that repeats
// the token (a proxy echoing the request) is shown cut to 200 bytes; the
// token is removed before the cut, so no prefix of it is left where the
// cut falls inside it.
func TestDoctorOnlineErrorBodyRedactedBeforeCut(t *testing.T) {
	const tok = "MTEwMDAwMDAwMDAwMDAwMDAx.GhTkQz.echoed-by-a-proxy-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"message":"%s","you_sent":%q}`, strings.Repeat("x", 150), r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	on := true
	s := &Section{Enable: &on, Token: confkit.Secret(tok), APIURL: srv.URL}
	st := s.DoctorOnline(context.Background(), gateways.Deps{})
	if st.Runs || len(st.Lines) != 1 || !strings.Contains(st.Lines[0], "HTTP 401") {
		t.Fatalf("echoing server: %+v", st)
	}
	if prefix := tok[:20]; strings.Contains(st.Lines[0], prefix) {
		t.Errorf("line %q holds the token's first bytes %q", st.Lines[0], prefix)
	}
}

// TestDoctorOnlineNamesARefusedToken: a token Discord refuses (401) is
// named by its key and variable, never shown.
func TestDoctorOnlineNamesARefusedToken(t *testing.T) {
	fake := newFake(fakediscord.Options{})
	defer fake.Close()
	on := true
	const wrong = "MTk5OTk5.wrong-discord-token-for-doctor"
	s := &Section{Enable: &on, Token: wrong, APIURL: fake.URL()}
	st := s.DoctorOnline(context.Background(), gateways.Deps{})
	if st.Runs || len(st.Lines) != 1 || !strings.Contains(st.Lines[0], "gateways.discord.token (DISCORD_BOT_TOKEN): HTTP 401") {
		t.Fatalf("refused token: %+v", st)
	}
	if strings.Contains(st.Lines[0], wrong) {
		t.Errorf("line %q holds the token", st.Lines[0])
	}
}
