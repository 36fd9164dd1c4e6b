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

// TestDoctorOnlineNamesARefusedToken: a bot token Slack refuses is named
// by its key and variable, never shown.
func TestDoctorOnlineNamesARefusedToken(t *testing.T) {
	fake := newFake(fakeslack.Options{})
	defer fake.Close()
	on := true
	const wrong = "xoxb-1-wrong-bot-token-for-doctor"
	s := &Section{Enable: &on, BotToken: wrong, AppToken: confkit.Secret(fake.AppToken()), APIURL: fake.URL() + "/api/"}
	st := s.DoctorOnline(context.Background(), gateways.Deps{})
	if st.Runs || len(st.Lines) != 1 || !strings.Contains(st.Lines[0], "gateways.slack.bot_token (SLACK_BOT_TOKEN): invalid_auth") {
		t.Fatalf("refused token: %+v", st)
	}
	if strings.Contains(st.Lines[0], wrong) {
		t.Errorf("line %q holds the token", st.Lines[0])
	}
}

// TestDoctorTokenKinds: bot_token takes an xoxb- token and app_token (in
// socket mode) an xapp- one; one of another kind, or in the other key, is
// a problem naming its key, and no problem shows a token.
func TestDoctorTokenKinds(t *testing.T) {
	const bot, app, user = "xoxb-1-doctor-bot", "xapp-1-doctor-app", "xoxp-1-doctor-user"
	for _, tt := range []struct {
		name, bot, app, mode string
		want                 []string
	}{
		{"right kinds", bot, app, ModeSocket, nil},
		{"swapped", app, bot, ModeSocket, []string{"bot_token (SLACK_BOT_TOKEN): an app-level token (xapp-…) belongs in app_token", "app_token (SLACK_APP_TOKEN): a bot token (xoxb-…) belongs in bot_token"}},
		{"user token", user, app, ModeSocket, []string{"bot_token (SLACK_BOT_TOKEN): a user token (xoxp-…)"}},
		{"no kind", "12345", "abcde", ModeSocket, []string{"not a Slack bot token", "not a Slack app-level token"}},
		{"events mode needs no app token", bot, "", ModeEvents, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSection()
			s.BotToken, s.AppToken, s.Mode = confkit.Secret(tt.bot), confkit.Secret(tt.app), tt.mode
			if tt.mode == ModeEvents {
				s.SigningSecret = "signing-secret"
			}
			st := s.Doctor()
			if !st.Runs || len(st.Problems) != len(tt.want) {
				t.Fatalf("Doctor() = %+v; want %d problem(s)", st, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(st.Problems[i], w) {
					t.Errorf("problem %q, want %q", st.Problems[i], w)
				}
				for _, tok := range []string{tt.bot, tt.app} {
					if tok != "" && strings.Contains(st.Problems[i], tok) {
						t.Errorf("problem %q shows a token", st.Problems[i])
					}
				}
			}
		})
	}
}
