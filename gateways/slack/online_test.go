package slack

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
)

// TestDoctorOnline: a live fake answers auth.test, a dead one fails; no
// line holds a token.
func TestDoctorOnline(t *testing.T) {
	fake := newFake(fakeslack.Options{})
	on := true
	s := &Section{Enable: &on, BotToken: confkit.Secret(fake.BotToken()), AppToken: confkit.Secret(fake.AppToken()), APIURL: fake.URL() + "/api/"}
	st := s.DoctorOnline(context.Background(), gateways.Deps{})
	if !st.Runs || len(st.Lines) != 1 || !strings.Contains(st.Lines[0], "auth.test ok") {
		t.Fatalf("live fake: %+v", st)
	}
	fake.Close()
	st = s.DoctorOnline(context.Background(), gateways.Deps{})
	if st.Runs || len(st.Lines) != 1 || !strings.Contains(st.Lines[0], "failed") {
		t.Fatalf("dead fake: %+v", st)
	}
	AssertNoSecrets(t, strings.Join(st.Lines, "\n"))
}
