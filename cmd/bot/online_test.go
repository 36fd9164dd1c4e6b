package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// onlineConfig configures the fake OpenAI server as the provider and the
// fake Bot API as Telegram, with their secrets in the environment.
func onlineConfig(dir, llmURL, tgURL string) string {
	return fmt.Sprintf(`llm:
  providers:
    - {name: fake, base_url: %q, api_key: "${OPENAI_API_KEY}", model: fake-model}
gateways:
  console: {enabled: false}
  telegram: {token: "${TELEGRAM_BOT_TOKEN}", api_url: %q, allow: ["42"]}
hitl: {approvers: ["telegram:42"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
`, llmURL, tgURL, filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
}

const onlineKey = "sk-online-doctor-secret-0123456789"

// latency matches a reported latency such as "12ms" or "1.5s".
var latency = regexp.MustCompile(`(ok in|after) [0-9.]+(µs|ms|s)`)

// TestDoctorOnline: with live fakes every service is reported ok with its
// latency and doctor exits 0; with both fakes dead each is reported
// failed — Telegram as a problem (the bot would not start), the provider
// as a warning (the bot runs and asks it again) — and doctor exits 1. No
// secret is printed either way.
func TestDoctorOnline(t *testing.T) {
	t.Parallel()
	llm := fakeopenai.Start(t)
	tg := faketg.New(faketg.Options{Token: shapedTelegramToken})
	t.Cleanup(tg.Close)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", onlineConfig(dir, llm.URL(), tg.URL()))
	env := baseEnv(dir, "OPENAI_API_KEY="+onlineKey, "TELEGRAM_BOT_TOKEN="+tg.Token())
	noSecret := func(t *testing.T, r result) {
		t.Helper()
		for _, s := range []string{onlineKey, tg.Token(), strings.SplitN(tg.Token(), ":", 2)[1]} {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("doctor --online printed a secret %q:\n%s%s", s, r.stdout, r.stderr)
			}
		}
	}

	live := runOnce(t, dir, env, "", "doctor", "--online")
	noSecret(t, live)
	if live.code != 0 {
		t.Fatalf("doctor --online with live fakes: exit %d\n%s%s", live.code, live.stdout, live.stderr)
	}
	for _, want := range []string{"llm fake: GET /models ok in", "telegram: getMe ok in"} {
		if !strings.Contains(live.stdout, want) {
			t.Errorf("doctor --online does not say %q:\n%s", want, live.stdout)
		}
	}
	if n := len(latency.FindAllString(live.stdout, -1)); n != 2 {
		t.Errorf("%d latencies reported, want 2:\n%s", n, live.stdout)
	}
	if tg.Calls("getMe") == 0 || len(llm.Requests()) != 0 {
		t.Errorf("getMe calls %d, chat completions %d: want getMe asked and no completion spent", tg.Calls("getMe"), len(llm.Requests()))
	}

	offline := runOnce(t, dir, env, "", "doctor")
	if offline.code != 0 || strings.Contains(offline.stdout, "getMe") {
		t.Errorf("doctor without --online went online or failed: exit %d\n%s", offline.code, offline.stdout)
	}

	llm.Close()
	tg.Close()
	dead := runOnce(t, dir, env, "", "doctor", "--online")
	noSecret(t, dead)
	if dead.code != 1 {
		t.Fatalf("doctor --online with dead fakes: exit %d, want 1\n%s%s", dead.code, dead.stdout, dead.stderr)
	}
	for _, want := range []string{"warning: llm fake: GET", "PROBLEM: telegram: getMe failed after"} {
		if !strings.Contains(dead.stdout, want) {
			t.Errorf("doctor --online with dead fakes does not say %q:\n%s", want, dead.stdout)
		}
	}
}
