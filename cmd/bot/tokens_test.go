package main

import (
	"fmt"
	"strings"
	"testing"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// TestDoctorChecksTokenShapes: a token of the wrong shape, or put in the
// wrong key, is a problem named by its key and variable, without the
// token; tokens of the right shapes pass.
func TestDoctorChecksTokenShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  []string
		want string // "" for no problem
	}{
		{"right shapes", []string{"TELEGRAM_BOT_TOKEN=" + shapedTelegramToken, "SLACK_BOT_TOKEN=" + shapedSlackBot, "SLACK_APP_TOKEN=" + shapedSlackApp}, ""},
		{"telegram", []string{"TELEGRAM_BOT_TOKEN=tg-firstday-not-a-token"},
			"PROBLEM: gateways.telegram.token (TELEGRAM_BOT_TOKEN): not a Telegram bot token"},
		{"slack app token as bot token", []string{"SLACK_BOT_TOKEN=" + shapedSlackApp, "SLACK_APP_TOKEN=" + shapedSlackApp},
			"PROBLEM: gateways.slack.bot_token (SLACK_BOT_TOKEN): an app-level token (xapp-…) belongs in app_token"},
		{"slack bot token as app token", []string{"SLACK_BOT_TOKEN=" + shapedSlackBot, "SLACK_APP_TOKEN=" + shapedSlackBot},
			"PROBLEM: gateways.slack.app_token (SLACK_APP_TOKEN): a bot token (xoxb-…) belongs in bot_token"},
		{"slack token in telegram", []string{"TELEGRAM_BOT_TOKEN=" + shapedSlackBot},
			"PROBLEM: gateways.telegram.token (TELEGRAM_BOT_TOKEN): not a Telegram bot token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "config.yaml", defaultConfig(t))
			r := runOnce(t, dir, baseEnv(dir, tc.env...), "", "doctor")
			for _, e := range tc.env {
				_, tok, _ := strings.Cut(e, "=")
				noSecretIn(t, "doctor", r.stdout+r.stderr, tok)
			}
			if tc.want == "" {
				if r.code != exitOK || strings.Contains(r.stdout, "PROBLEM") {
					t.Errorf("bot doctor: exit %d; want 0 and no problem\n%s", r.code, r.stdout)
				}
				return
			}
			if r.code != exitFail || !strings.Contains(r.stdout, tc.want) {
				t.Errorf("bot doctor: exit %d; want %d and %q\n%s", r.code, exitFail, tc.want, r.stdout)
			}
		})
	}
}

// TestDoctorOnlineNamesARefusedToken: a token Telegram refuses is named by
// its key and variable, never shown.
func TestDoctorOnlineNamesARefusedToken(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{Token: shapedTelegramToken})
	t.Cleanup(tg.Close)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf("gateways:\n  console: {enabled: false}\n  telegram: {token: \"${TELEGRAM_BOT_TOKEN}\", api_url: %q}\nhitl: {approvers: [\"telegram:42\"]}\nstore: {dsn: gatehouse.db}\nhttp: {listen: \"\"}\n", tg.URL()))
	wrong := "987654321:AAWrongWrongWrongWrongWrongWrongWro"
	r := runOnce(t, dir, baseEnv(dir, "TELEGRAM_BOT_TOKEN="+wrong), "", "doctor", "--online")
	noSecretIn(t, "doctor --online", r.stdout+r.stderr, wrong, strings.SplitN(wrong, ":", 2)[1])
	want := "gateways.telegram.token (TELEGRAM_BOT_TOKEN): Unauthorized"
	if r.code != exitFail || !strings.Contains(doctorSummary(r.stdout, "problems"), want) {
		t.Errorf("bot doctor --online with a refused token: exit %d; want %d and the problem %q\n%s", r.code, exitFail, want, r.stdout)
	}
}
