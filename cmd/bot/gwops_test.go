package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord"
	fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

const (
	opsDiscordToken = "MTk5OTk5.OPS-discord-token-secret"
	opsSlackBot     = "xoxb-1-OPS-slack-bot-token-secret"
	opsSlackApp     = "xapp-1-A0FAKE-OPS-slack-app-token-secret"
)

// platformConfig enables Discord and Slack on their fakes (either may be
// "" to leave it off), tokens from the environment.
func platformConfig(dir, discordURL, slackURL, listen string) string {
	dc, sl := "{enabled: false}", "{enabled: false}"
	if discordURL != "" {
		dc = fmt.Sprintf(`{token: "${DISCORD_BOT_TOKEN}", api_url: %q, allow: ["7"]}`, discordURL)
	}
	if slackURL != "" {
		sl = fmt.Sprintf(`{bot_token: "${SLACK_BOT_TOKEN}", app_token: "${SLACK_APP_TOKEN}", api_url: %q, allow: ["U7"]}`, slackURL)
	}
	return fmt.Sprintf(`gateways:
  console: {enabled: false}
  telegram: {enabled: false}
  discord: %s
  slack: %s
hitl: {approvers: ["discord:7"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: %q}
log: {level: debug, format: json}
`, dc, sl, filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"), listen)
}

func platformEnv(dir string) []string {
	return baseEnv(dir, "DISCORD_BOT_TOKEN="+opsDiscordToken, "SLACK_BOT_TOKEN="+opsSlackBot, "SLACK_APP_TOKEN="+opsSlackApp)
}

// noOpsSecret fails the test when out holds a token of platformEnv.
func noOpsSecret(t *testing.T, what, out string) {
	t.Helper()
	for _, s := range []string{opsDiscordToken, "OPS-discord-token", opsSlackBot, opsSlackApp, "OPS-slack"} {
		if strings.Contains(out, s) {
			t.Errorf("%s shows a token (%q):\n%s", what, s, out)
		}
	}
}

// TestReadyzFollowsDiscordSession: through the binary, /readyz is 503
// naming discord while the fake holds the gateway lookup (no session
// yet), 200 once the websocket session is up, and 503 again once the fake
// is gone; /healthz stays 200; nothing shows the token.
func TestReadyzFollowsDiscordSession(t *testing.T) {
	t.Parallel()
	dc := fakediscord.New(fakediscord.Options{Token: opsDiscordToken, HeartbeatInterval: 200 * time.Millisecond})
	t.Cleanup(dc.Close)
	dc.FailNext(fakediscord.RouteGatewayBot, 1, fakediscord.FaultHang)
	dc.FailNext(fakediscord.RouteGateway, 1, fakediscord.FaultHang)
	dir := t.TempDir()
	addr := freeAddr(t)
	writeFile(t, dir, "config.yaml", platformConfig(dir, dc.URL(), "", addr))
	p := startBot(t, dir, platformEnv(dir))

	testutil.WaitFor(t, "/healthz", func() bool { code, _ := get(addr, "/healthz"); return code == http.StatusOK })
	testutil.WaitFor(t, "the held gateway lookup", func() bool {
		return dc.Calls(fakediscord.RouteGatewayBot)+dc.Calls(fakediscord.RouteGateway) > 0
	})
	code, body := get(addr, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "discord") {
		t.Fatalf("/readyz before the session is up: %d %q; want 503 naming discord", code, body)
	}
	if dc.Connected() != 0 {
		t.Fatalf("%d sessions while the lookup is held", dc.Connected())
	}
	dc.Release()
	testutil.WaitFor(t, "/readyz ready", func() bool { code, _ := get(addr, "/readyz"); return code == http.StatusOK })
	if dc.Connected() == 0 {
		t.Error("ready without a websocket session")
	}
	dc.Close()
	testutil.WaitFor(t, "/readyz not ready after the fake went down", func() bool {
		code, body := get(addr, "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "discord")
	})
	if code, _ := get(addr, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d while Discord is down; want 200 (liveness)", code)
	}
	_, body = get(addr, "/readyz")
	noOpsSecret(t, "/readyz", body)
	noOpsSecret(t, "the log", p.stderr.String())
}

// TestReadyzFollowsSlackSocketMode: through the binary, /readyz is 200
// once Socket Mode is connected (a live connection at the fake) and 503
// naming slack once the fake is gone; nothing shows a token.
func TestReadyzFollowsSlackSocketMode(t *testing.T) {
	t.Parallel()
	sl := fakeslack.New(fakeslack.Options{BotToken: opsSlackBot, AppToken: opsSlackApp})
	t.Cleanup(sl.Close)
	dir := t.TempDir()
	addr := freeAddr(t)
	writeFile(t, dir, "config.yaml", platformConfig(dir, "", sl.URL()+"/api/", addr))
	p := startBot(t, dir, platformEnv(dir))

	testutil.WaitFor(t, "/readyz ready", func() bool { code, _ := get(addr, "/readyz"); return code == http.StatusOK })
	if sl.Live() == 0 {
		t.Error("ready without a Socket Mode connection")
	}
	sl.Close()
	testutil.WaitFor(t, "/readyz not ready after the fake went down", func() bool {
		code, body := get(addr, "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "slack")
	})
	_, body := get(addr, "/readyz")
	noOpsSecret(t, "/readyz", body)
	noOpsSecret(t, "the log", p.stderr.String())
}

// TestDoctorOnlineDiscordAndSlack: with live fakes doctor --online reports
// Discord's users/@me and Slack's auth.test ok with their latency, exit 0;
// with both fakes dead each is a problem, exit 1. No token is printed.
func TestDoctorOnlineDiscordAndSlack(t *testing.T) {
	t.Parallel()
	dc := fakediscord.New(fakediscord.Options{Token: opsDiscordToken})
	t.Cleanup(dc.Close)
	sl := fakeslack.New(fakeslack.Options{BotToken: opsSlackBot, AppToken: opsSlackApp})
	t.Cleanup(sl.Close)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", platformConfig(dir, dc.URL(), sl.URL()+"/api/", ""))
	env := platformEnv(dir)

	live := runOnce(t, dir, env, "", "doctor", "--online")
	noOpsSecret(t, "doctor --online", live.stdout+live.stderr)
	if live.code != 0 {
		t.Fatalf("doctor --online with live fakes: exit %d\n%s%s", live.code, live.stdout, live.stderr)
	}
	for _, want := range []string{"discord: users/@me ok in", "slack: auth.test ok in"} {
		if !strings.Contains(live.stdout, want) {
			t.Errorf("doctor --online does not say %q:\n%s", want, live.stdout)
		}
	}
	if n := len(latency.FindAllString(live.stdout, -1)); n != 2 {
		t.Errorf("%d latencies reported, want 2:\n%s", n, live.stdout)
	}
	if dc.Calls(fakediscord.RouteMe) == 0 || sl.Calls("auth.test") == 0 {
		t.Errorf("users/@me asked %d times, auth.test %d: want both asked", dc.Calls(fakediscord.RouteMe), sl.Calls("auth.test"))
	}

	dc.Close()
	sl.Close()
	dead := runOnce(t, dir, env, "", "doctor", "--online")
	noOpsSecret(t, "doctor --online", dead.stdout+dead.stderr)
	if dead.code != 1 {
		t.Fatalf("doctor --online with dead fakes: exit %d, want 1\n%s%s", dead.code, dead.stdout, dead.stderr)
	}
	for _, want := range []string{"PROBLEM: discord: users/@me failed after", "PROBLEM: slack: auth.test failed after"} {
		if !strings.Contains(dead.stdout, want) {
			t.Errorf("doctor --online with dead fakes does not say %q:\n%s", want, dead.stdout)
		}
	}
}
