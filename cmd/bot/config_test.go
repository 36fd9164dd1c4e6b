package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigErrors: a bad configuration makes `bot` and `bot doctor` exit 2
// with one line naming the key, before anything is created or connected.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, key string
	}{
		{"unknown key", "gateways:\n  telegram:\n    foo: 1\n", "gateways.telegram.foo"},
		{"bad duration", "llm:\n  timeout: 5 minutes\n", "llm.timeout"},
		{"no approvers", "hitl:\n  approvers: []\n", "hitl.approvers"},
		{"provider without base_url", "llm:\n  providers:\n    - name: p\n      api_key: k\n      model: m\n", "llm.providers[0].base_url"},
	}
	for _, tc := range cases {
		for _, sub := range [][]string{{}, {"run"}, {"doctor"}} {
			name := tc.name + "/" + strings.Join(append([]string{"bot"}, sub...), " ")
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				writeFile(t, dir, "bad.yaml", tc.yaml+"store: {dsn: gatehouse.db}\nhttp: {listen: \"\"}\n")
				args := append(append([]string{}, sub...), "-config", "bad.yaml")
				r := runOnce(t, dir, baseEnv(dir), "hello\n", args...)
				if r.code != exitConfig {
					t.Fatalf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitConfig, r.stdout, r.stderr)
				}
				lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
				if len(lines) != 1 || !strings.Contains(lines[0], tc.key) {
					t.Errorf("stderr = %q; want one line naming %s", r.stderr, tc.key)
				}
				if _, err := os.Stat(filepath.Join(dir, "gatehouse.db")); !os.IsNotExist(err) {
					t.Errorf("the store was created despite the configuration error (stat: %v)", err)
				}
				if strings.Contains(r.stdout, "gatehouse ›") {
					t.Errorf("the bot answered despite the configuration error:\n%s", r.stdout)
				}
			})
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runOnce(t, dir, baseEnv(dir), "", "version")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "gatehouse ") || strings.TrimSpace(r.stdout) == "gatehouse" {
		t.Errorf("bot version: exit %d, stdout %q, stderr %q; want exit 0 and \"gatehouse VERSION\"", r.code, r.stdout, r.stderr)
	}
}

func TestUnknownSubcommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runOnce(t, dir, baseEnv(dir), "", "frobnicate")
	if r.code != exitConfig {
		t.Errorf("exit %d; want %d", r.code, exitConfig)
	}
	if !strings.Contains(r.stderr, "frobnicate") {
		t.Errorf("stderr %q does not name the unknown command", r.stderr)
	}
}

// defaultConfig returns the shipped config.yaml.
func defaultConfig(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "config.yaml"))
	if err != nil {
		t.Fatalf("read the shipped config.yaml: %v", err)
	}
	return string(b)
}

// TestDoctorDefaultConfig: the shipped config runs offline: doctor says so
// and exits 0, without creating the store.
func TestDoctorDefaultConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", defaultConfig(t))
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != exitOK {
		t.Fatalf("bot doctor: exit %d; want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"demo model", "console: enabled", "approvers: console:local"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor output does not mention %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gatehouse.db")); !os.IsNotExist(err) {
		t.Errorf("doctor created the store (stat: %v); it should only check", err)
	}
}

// TestDoctorNoGateway: with the console disabled and no platform
// credentials nothing could talk to the bot: doctor exits 1.
func TestDoctorNoGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", "gateways:\n  console: {enabled: false}\nhttp: {listen: \"\"}\n")
	r := runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != exitFail {
		t.Fatalf("bot doctor: exit %d; want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitFail, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "no gateway") {
		t.Errorf("doctor does not say that no gateway is enabled:\n%s", r.stdout)
	}
}

// TestDoctorHidesURLCredentials: a base_url with user:password@ is shown
// with the password masked, and counts as credentials (the provider is
// used, not skipped for lack of an api_key).
func TestDoctorHidesURLCredentials(t *testing.T) {
	t.Parallel()
	const password = "proxyPass-7Hq2"
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", "llm:\n  providers:\n    - {name: proxy, base_url: 'https://bot:${PROXY_PW}@proxy.example.com/v1'}\nhttp: {listen: \"\"}\n")
	r := runOnce(t, dir, baseEnv(dir, "PROXY_PW="+password), "", "doctor")
	if r.code != exitOK {
		t.Fatalf("bot doctor: exit %d; want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, password) {
		t.Fatalf("doctor printed the base_url password:\n%s%s", r.stdout, r.stderr)
	}
	for _, want := range []string{"https://bot:xxxxx@proxy.example.com/v1", "credentials in base_url"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor output does not show %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "demo model") {
		t.Errorf("the provider with credentials in its base_url was skipped:\n%s", r.stdout)
	}
}

// TestDoctorReportsDiscord: a Discord token in the environment enables the
// Discord gateway: doctor says it runs, how it behaves in guild channels
// and who may talk to it, without the token; a Discord-only setup is a
// setup that runs.
func TestDoctorReportsDiscord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", defaultConfig(t))
	r := runOnce(t, dir, baseEnv(dir, "DISCORD_BOT_TOKEN=discord-token-123456"), "", "doctor")
	want := "discord: enabled; guild channels: mention; who may talk: only the approvers (allow is empty)"
	if r.code != exitOK || !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "adapter yet") {
		t.Fatalf("bot doctor: exit %d; want a line %q\n%s", r.code, want, r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "discord-token-123456") {
		t.Errorf("doctor printed the Discord token:\n%s", r.stdout)
	}
	writeFile(t, dir, "config.yaml", "gateways:\n  console: {enabled: false}\n  discord: {token: x-discord-token, guild_id: \"5001\"}\nhitl: {approvers: [\"discord:500\"]}\nhttp: {listen: \"\"}\n")
	r = runOnce(t, dir, baseEnv(dir), "", "doctor")
	if r.code != exitOK || !strings.Contains(r.stdout, "slash commands in guild 5001") {
		t.Fatalf("bot doctor with only Discord: exit %d; want %d\n%s", r.code, exitOK, r.stdout)
	}
}

// TestRunWithoutGatewayFails: a bot nobody could talk to stops at once
// with a clear error instead of running idle for ever; it is a
// configuration error (exit 2), found before the store is created.
func TestRunWithoutGatewayFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", "gateways:\n  console: {enabled: false}\nhttp: {listen: \"\"}\n")
	r := runOnce(t, dir, baseEnv(dir), "", "run")
	if r.code != exitConfig || !strings.Contains(r.stderr, "gateways: none is enabled") {
		t.Fatalf("bot run: exit %d; want %d with a clear error\nstderr:\n%s", r.code, exitConfig, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "gatehouse.db")); !os.IsNotExist(err) {
		t.Errorf("the store was created despite the configuration error (stat: %v)", err)
	}
}

// TestDoctorGatewayLines pins doctor's gateway block, line for line, for a
// setup with no platform credentials and for one with Telegram and Slack
// tokens: each gateway of the gateway table reports itself, in order.
func TestDoctorGatewayLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  []string
		want []string
	}{
		{"no credentials", nil, []string{
			"gateways  console: enabled (console:local)",
			"          telegram: disabled (set gateways.telegram.token (TELEGRAM_BOT_TOKEN) to enable)",
			"          discord: disabled (set gateways.discord.token (DISCORD_BOT_TOKEN) to enable)",
			"          slack: disabled (set gateways.slack.bot_token (SLACK_BOT_TOKEN) and app_token (SLACK_APP_TOKEN) to enable)",
		}},
		{"telegram and slack", []string{"TELEGRAM_BOT_TOKEN=" + shapedTelegramToken, "SLACK_BOT_TOKEN=xoxb-doctor", "SLACK_APP_TOKEN=xapp-doctor"}, []string{
			"gateways  console: enabled (console:local)",
			"          telegram: enabled; who may talk: only the approvers (allow is empty)",
			"          telegram: pairing off (gateways.telegram.pairing: true lets strangers ask for a code)",
			"          discord: disabled (set gateways.discord.token (DISCORD_BOT_TOKEN) to enable)",
			"          slack: enabled (socket mode, channels: mention); who may talk: only the approvers (allow is empty)",
			"          slack: pairing off (gateways.slack.pairing: true lets strangers ask for a code)",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "config.yaml", defaultConfig(t))
			r := runOnce(t, dir, baseEnv(dir, tc.env...), "", "doctor")
			if r.code != exitOK {
				t.Fatalf("bot doctor: exit %d; want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if got := doctorBlock(r.stdout, "gateways"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("gateway lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// doctorBlock returns a component's lines of doctor's output: its labelled
// line and the unlabelled lines that follow.
func doctorBlock(out, component string) []string {
	var block []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, component+" "):
			block = append(block, l)
		case len(block) > 0 && strings.HasPrefix(l, " "):
			block = append(block, l)
		case len(block) > 0:
			return block
		}
	}
	return block
}
