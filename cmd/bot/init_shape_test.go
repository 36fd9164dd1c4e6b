package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// badTelegramToken has a bot id and a colon but not the 35 characters
// after it: `bot doctor` says the bot cannot run with it.
const badTelegramToken = "123456:too-short-to-be-a-token"

// assertNothingWritten fails when bot init wrote config.yaml or .env in dir.
func assertNothingWritten(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"config.yaml", ".env"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s written (%v)", name, err)
		}
	}
}

// TestInitRefusesATokenOfTheWrongShape: a token that `bot doctor` would
// call a problem is not written. With -yes, or piped answers, bot init
// exits 2 naming the variable (and not showing the value); on a terminal
// it says why and asks again, and the right token then goes on as usual.
// It wrote the token, and doctor then said the bot could not run.
func TestInitRefusesATokenOfTheWrongShape(t *testing.T) {
	t.Parallel()
	f := startInitFakes(t)
	t.Run("-yes", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		r := runOnce(t, dir, baseEnv(dir, "TELEGRAM_BOT_TOKEN="+badTelegramToken), "",
			f.initArgs("-yes", "-gateways", "telegram", "-approver", "telegram:42")...)
		if r.code != exitConfig || !strings.Contains(r.stderr, "TELEGRAM_BOT_TOKEN") || !strings.Contains(r.stderr, "not a Telegram bot token") {
			t.Errorf("exit %d, stderr %q; want %d naming TELEGRAM_BOT_TOKEN", r.code, r.stderr, exitConfig)
		}
		if strings.Contains(r.stdout+r.stderr, "too-short") {
			t.Errorf("the token was shown:\n%s%s", r.stdout, r.stderr)
		}
		assertNothingWritten(t, dir)
	})
	t.Run("-yes slack", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		r := runOnce(t, dir, baseEnv(dir, "SLACK_BOT_TOKEN=xapp-1-in-the-wrong-key", "SLACK_APP_TOKEN=xapp-1-in-the-right-key"), "",
			"init", "-yes", "-gateways", "slack", "-http-listen=")
		if r.code != exitConfig || !strings.Contains(r.stderr, "SLACK_BOT_TOKEN") || strings.Contains(r.stderr, "SLACK_APP_TOKEN") {
			t.Errorf("exit %d, stderr %q; want %d naming SLACK_BOT_TOKEN alone", r.code, r.stderr, exitConfig)
		}
		assertNothingWritten(t, dir)
	})
	t.Run("piped", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		r := runOnce(t, dir, baseEnv(dir), "telegram\n"+badTelegramToken+"\n"+f.tg.Token()+"\n", f.initArgs()...)
		if r.code != exitConfig || !strings.Contains(r.stderr, "TELEGRAM_BOT_TOKEN") || !strings.Contains(r.stderr, "not a Telegram bot token") {
			t.Errorf("exit %d, stderr %q; want %d naming TELEGRAM_BOT_TOKEN", r.code, r.stderr, exitConfig)
		}
		assertNothingWritten(t, dir)
	})
	t.Run("terminal", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		b := startTermCmd(t, dir, baseEnv(dir, "TERM=xterm"), f.initArgs()...)
		b.expect("Gateways to enable", 1)
		b.typeIn("telegram\r")
		b.expect("Telegram bot token", 1)
		b.typeIn(badTelegramToken + "\r")
		b.expect("TELEGRAM_BOT_TOKEN): not a Telegram bot token", 1)
		b.expect("Telegram bot token", 2)
		// The prompt is written just before the echo goes off.
		testutil.WaitFor(t, "the terminal's echo off while the token is asked again", func() bool { return !b.echoing() })
		b.typeIn(f.tg.Token() + "\r")
		b.expect("Checked: telegram: getMe ok", 1)
		b.expect("LLM provider", 1)
		b.typeIn("4\r")
		b.expect("Approvers, comma-separated", 1)
		b.typeIn("telegram:42\r")
		if code := b.exit(); code != 0 {
			t.Fatalf("bot init: exit %d\n%s", code, b.out.String())
		}
		<-b.copied
		if env := readFile(t, filepath.Join(dir, ".env")); !strings.Contains(env, "TELEGRAM_BOT_TOKEN="+f.tg.Token()+"\n") {
			t.Errorf(".env does not hold the token given the second time:\n%s", env)
		}
		if strings.Contains(b.out.String(), "too-short") {
			t.Errorf("the wrong token was shown:\n%s", b.out.String())
		}
	})
}

// TestInitDoesNotEchoASecretAtTheWrongQuestion: a token or key pasted at
// a question that is not a secret's, and refused, is not quoted in full:
// one shaped like a known key not at all, any other only by its first
// characters. It was: `"123456789:aah…" is not a gateway`, `approver
// "sk-…": want gateway:id`.
func TestInitDoesNotEchoASecretAtTheWrongQuestion(t *testing.T) {
	t.Parallel()
	const (
		keyShaped = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"  // the redaction knows this shape
		unknown   = "MTA4NjE2NjQ4.GhX2aB.an-unknown-shape-of-secret" // it does not know this one
		apiKey    = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	)
	const notShown = "(an answer shaped like a token or key, not shown)"
	for _, c := range []struct {
		name, input, secret, want string
		args                      []string
	}{
		{"gateway, key-shaped", keyShaped + "\n", "AHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", notShown + " is not a gateway", nil},
		{"gateway, unknown shape", unknown + "\n", "an-unknown-shape", `"MTA4NjE2…" is not a gateway`, nil},
		{"approver", "console\n4\n" + apiKey + "\n", "abcdefghijklmnop", "approver " + notShown, nil},
		{"-approver", "", "abcdefghijklmnop", "approver " + notShown, []string{"-yes", "-approver", apiKey}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := runOnce(t, dir, baseEnv(dir), c.input, append([]string{"init", "-http-listen="}, c.args...)...)
			if r.code == exitOK {
				t.Fatalf("bot init took the answer:\n%s%s", r.stdout, r.stderr)
			}
			if out := strings.ToLower(r.stdout + r.stderr); strings.Contains(out, strings.ToLower(c.secret)) {
				t.Errorf("the answer was quoted in full:\n%s%s", r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, c.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, c.want)
			}
			assertNothingWritten(t, dir)
		})
	}
}

// TestInitKeepsAKeyOutOfConfigYAML: an API key pasted at the model's
// question (or the base URL's), written to config.yaml as it was, is not
// taken: piped, bot init exits 2 without showing it and writes nothing;
// on a terminal the question is asked again. It wrote
// `model: "sk-…"` into config.yaml.
func TestInitKeepsAKeyOutOfConfigYAML(t *testing.T) {
	t.Parallel()
	const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	f := startInitFakes(t)
	t.Run("piped", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		r := runOnce(t, dir, baseEnv(dir), "console\n1\n"+f.llm.URL()+"\n"+key+"\n"+key+"\n", f.initArgs()...)
		if r.code != exitConfig || !strings.Contains(r.stderr, "Model: (an answer shaped like a token or key, not shown)") {
			t.Errorf("exit %d, stderr %q; want %d saying the model's answer looks like a key", r.code, r.stderr, exitConfig)
		}
		if strings.Contains(r.stdout+r.stderr, key) {
			t.Errorf("the key was shown:\n%s%s", r.stdout, r.stderr)
		}
		assertNothingWritten(t, dir)
	})
	t.Run("terminal", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		b := startTermCmd(t, dir, baseEnv(dir, "TERM=xterm"), f.initArgs()...)
		b.expect("Gateways to enable", 1)
		b.typeIn("console\r")
		b.expect("LLM provider", 1)
		b.typeIn("1\r")
		b.expect("Base URL", 1)
		b.typeIn(f.llm.URL() + "\r")
		b.expect("Model [", 1)
		b.typeIn(key + "\r")
		b.expect("That looks like a token or key", 1)
		b.expect("Model [", 2)
		b.typeIn("fake-model\r")
		b.expect("API key", 1)
		b.typeIn(initKey + "\r")
		b.expect("Approvers, comma-separated", 1)
		b.typeIn("\r")
		if code := b.exit(); code != 0 {
			t.Fatalf("bot init: exit %d\n%s", code, b.out.String())
		}
		if cfg := readFile(t, filepath.Join(dir, "config.yaml")); strings.Contains(cfg, key) || !strings.Contains(cfg, "fake-model") {
			t.Errorf("config.yaml holds the key, or not the model given the second time:\n%s", cfg)
		}
	})
}
