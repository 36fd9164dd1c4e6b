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

// The tokens of these tests: distinctive, so that any echo of them shows.
const (
	healthDiscordToken = "MTk5OTk5.HEALTH-discord-token-secret"
	healthSlackBot     = "xoxb-1-HEALTH-slack-bot-token-secret"
	healthSlackApp     = "xapp-1-A0FAKE-HEALTH-slack-app-token-secret"
)

// discordHealthConfig enables only Discord against the fake at url, its
// token from the environment, /healthz /readyz on listen ("" for none).
func discordHealthConfig(dir, url, listen string) string {
	return fmt.Sprintf(`gateways:
  console: {enabled: false}
  discord: {token: "${DISCORD_BOT_TOKEN}", api_url: %q}
hitl: {approvers: ["discord:500"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: %q}
log: {level: debug, format: json}
`, url, filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"), listen)
}

// slackHealthConfig enables only Slack (Socket Mode) against the fake at
// url, its tokens from the environment.
func slackHealthConfig(dir, url, listen string) string {
	return fmt.Sprintf(`gateways:
  console: {enabled: false}
  slack: {bot_token: "${SLACK_BOT_TOKEN}", app_token: "${SLACK_APP_TOKEN}", api_url: %q, allow: ["U1"]}
hitl: {approvers: ["slack:U1"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: %q}
log: {level: debug, format: json}
`, url+"/api/", filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"), listen)
}

// noSecretIn fails the test when out holds one of secrets.
func noSecretIn(t *testing.T, what, out string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s shows the secret %q:\n%s", what, s, out)
		}
	}
}

// TestReadyzFollowsDiscordSession: /readyz is 503 naming discord while the
// websocket cannot be opened (the fake holds GET /gateway, the request
// discordgo makes before it dials), 200 once the session is up; /healthz
// is live throughout and the token is in no answer or log line.
func TestReadyzFollowsDiscordSession(t *testing.T) {
	t.Parallel()
	dc := fakediscord.New(fakediscord.Options{Token: healthDiscordToken, HeartbeatInterval: 200 * time.Millisecond})
	dc.FailNext(fakediscord.RouteGateway, 1, fakediscord.FaultHang)
	dir := t.TempDir()
	addr := freeAddr(t)
	writeFile(t, dir, "config.yaml", discordHealthConfig(dir, dc.URL(), addr))
	var p *botProc
	t.Cleanup(func() {
		// Registered before startBot: runs after the bot stopped.
		dc.Close()
		if p != nil {
			noSecretIn(t, "the bot's output", p.stdout()+p.stderr.String(), healthDiscordToken, "HEALTH-discord-token")
		}
	})
	p = startBot(t, dir, baseEnv(dir, "DISCORD_BOT_TOKEN="+healthDiscordToken))

	testutil.WaitFor(t, "the held GET /gateway", func() bool { return dc.Calls(fakediscord.RouteGateway) >= 1 })
	testutil.WaitFor(t, "/healthz", func() bool { code, _ := get(addr, "/healthz"); return code == http.StatusOK })
	// During start-up /readyz says "starting"; past it, it names the gateway.
	var code int
	var body string
	testutil.WaitFor(t, "/readyz past start-up", func() bool {
		code, body = get(addr, "/readyz")
		return code != 0 && !strings.Contains(body, "starting")
	})
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "gateway discord: discord: websocket session not up") {
		t.Fatalf("/readyz while the websocket cannot open: %d %q; want 503 naming discord", code, body)
	}
	if dc.Connected() != 0 {
		t.Fatalf("%d websocket sessions while GET /gateway is held, want 0", dc.Connected())
	}
	noSecretIn(t, "/readyz", body, healthDiscordToken)

	dc.Release()
	testutil.WaitFor(t, "/readyz ready", func() bool { code, _ := get(addr, "/readyz"); return code == http.StatusOK })
	if len(dc.Identifies()) == 0 {
		t.Error("/readyz is ready but the bot never identified")
	}
	if code, _ := get(addr, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz once ready: %d", code)
	}
}

// TestReadyzFollowsSlackSocket: /readyz is 503 naming slack while Socket
// Mode cannot connect (the fake holds apps.connections.open), 200 once the
// fake's hello arrived; /healthz is live throughout and no token shows.
func TestReadyzFollowsSlackSocket(t *testing.T) {
	t.Parallel()
	sl := fakeslack.New(fakeslack.Options{BotToken: healthSlackBot, AppToken: healthSlackApp})
	sl.FailNext("apps.connections.open", 1, fakeslack.FaultHang)
	dir := t.TempDir()
	addr := freeAddr(t)
	writeFile(t, dir, "config.yaml", slackHealthConfig(dir, sl.URL(), addr))
	var p *botProc
	t.Cleanup(func() {
		sl.Close()
		if p != nil {
			noSecretIn(t, "the bot's output", p.stdout()+p.stderr.String(), healthSlackBot, healthSlackApp, "HEALTH-slack")
		}
	})
	p = startBot(t, dir, baseEnv(dir, "SLACK_BOT_TOKEN="+healthSlackBot, "SLACK_APP_TOKEN="+healthSlackApp))

	testutil.WaitFor(t, "the held apps.connections.open", func() bool { return sl.Calls("apps.connections.open") >= 1 })
	testutil.WaitFor(t, "/healthz", func() bool { code, _ := get(addr, "/healthz"); return code == http.StatusOK })
	var code int
	var body string
	testutil.WaitFor(t, "/readyz past start-up", func() bool {
		code, body = get(addr, "/readyz")
		return code != 0 && !strings.Contains(body, "starting")
	})
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "gateway slack: slack: socket mode connection not up") {
		t.Fatalf("/readyz while Socket Mode cannot connect: %d %q; want 503 naming slack", code, body)
	}
	if sl.Connections() != 0 {
		t.Fatalf("%d socket connections while apps.connections.open is held, want 0", sl.Connections())
	}
	noSecretIn(t, "/readyz", body, healthSlackBot, healthSlackApp)

	sl.Release()
	testutil.WaitFor(t, "/readyz ready", func() bool { code, _ := get(addr, "/readyz"); return code == http.StatusOK })
	if sl.Connections() == 0 {
		t.Error("/readyz is ready but no socket connection was made")
	}
}

// TestDoctorOnlineDiscordAndSlack: doctor --online against live fakes says
// each gateway is ok with its latency and exits 0; against closed fakes it
// reports each failed and exits 1. No token is printed either way.
func TestDoctorOnlineDiscordAndSlack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		secrets []string
		start   func() (url string, calls func() int, stop func())
		config  func(dir, url string) string
		env     []string
		ok      string // the line of a live fake
		failed  string // the problem of a dead one
	}{
		{
			name:    "discord",
			secrets: []string{healthDiscordToken, "HEALTH-discord-token"},
			start: func() (string, func() int, func()) {
				dc := fakediscord.New(fakediscord.Options{Token: healthDiscordToken})
				return dc.URL(), func() int { return dc.Calls(fakediscord.RouteMe) }, dc.Close
			},
			config: func(dir, url string) string { return discordHealthConfig(dir, url, "") },
			env:    []string{"DISCORD_BOT_TOKEN=" + healthDiscordToken},
			ok:     "discord: users/@me ok in",
			failed: "PROBLEM: discord: users/@me failed after",
		},
		{
			name:    "slack",
			secrets: []string{healthSlackBot, healthSlackApp, "HEALTH-slack"},
			start: func() (string, func() int, func()) {
				sl := fakeslack.New(fakeslack.Options{BotToken: healthSlackBot, AppToken: healthSlackApp})
				return sl.URL(), func() int { return sl.Calls("auth.test") }, sl.Close
			},
			config: func(dir, url string) string { return slackHealthConfig(dir, url, "") },
			env:    []string{"SLACK_BOT_TOKEN=" + healthSlackBot, "SLACK_APP_TOKEN=" + healthSlackApp},
			ok:     "slack: auth.test ok in",
			failed: "PROBLEM: slack: auth.test failed after",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url, calls, stop := c.start()
			t.Cleanup(stop)
			dir := t.TempDir()
			writeFile(t, dir, "config.yaml", c.config(dir, url))
			env := baseEnv(dir, c.env...)

			live := runOnce(t, dir, env, "", "doctor", "--online")
			noSecretIn(t, "doctor --online", live.stdout+live.stderr, c.secrets...)
			if live.code != 0 {
				t.Fatalf("doctor --online with a live fake: exit %d\n%s%s", live.code, live.stdout, live.stderr)
			}
			if !strings.Contains(live.stdout, c.ok) {
				t.Errorf("doctor --online does not say %q:\n%s", c.ok, live.stdout)
			}
			if n := len(latency.FindAllString(live.stdout, -1)); n != 1 {
				t.Errorf("%d latencies reported, want 1:\n%s", n, live.stdout)
			}
			if calls() == 0 {
				t.Error("the fake was never asked")
			}

			stop()
			dead := runOnce(t, dir, env, "", "doctor", "--online")
			noSecretIn(t, "doctor --online", dead.stdout+dead.stderr, c.secrets...)
			if dead.code != 1 {
				t.Fatalf("doctor --online with a dead fake: exit %d, want 1\n%s%s", dead.code, dead.stdout, dead.stderr)
			}
			if !strings.Contains(dead.stdout, c.failed) || !latency.MatchString(dead.stdout) {
				t.Errorf("doctor --online with a dead fake does not say %q with its latency:\n%s", c.failed, dead.stdout)
			}
		})
	}
}
