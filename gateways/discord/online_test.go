package discord

import (
	"context"
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
