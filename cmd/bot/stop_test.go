package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// telegramConfig runs the console and Telegram, against the fake Bot API,
// with the offline demo model; Telegram user 42 may talk to the bot.
func telegramConfig(dir string, tg *faketg.Server) string {
	return fmt.Sprintf(`
gateways:
  console: {enabled: true}
  telegram: {token: %q, api_url: %q, allow: ["42"]}
tools: {workspace: %q}
store: {dsn: %q}
http: {listen: ""}
log: {level: debug, format: json}
`, tg.Token(), tg.URL(), filepath.Join(dir, "ws"), filepath.Join(dir, "gatehouse.db"))
}

func startTelegram(t *testing.T) *faketg.Server {
	t.Helper()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	return tg
}

// sentTexts counts the texts the bot sent on tg with sendMessage.
func sentTexts(tg *faketg.Server) map[string]int {
	n := map[string]int{}
	for _, s := range tg.Sent() {
		if s.Method == "sendMessage" {
			n[s.Plain]++
		}
	}
	return n
}

// askTelegram sends "what time is it" as Telegram user 42 and waits for
// the bot's answer there.
func askTelegram(t *testing.T, tg *faketg.Server) {
	t.Helper()
	before := len(tg.Sent())
	user := faketg.User{ID: 42, FirstName: "Ada"}
	tg.InjectMessage(faketg.Message{From: &user, Chat: faketg.Chat{ID: 42, Type: "private"}, Text: "what time is it"})
	testutil.WaitFor(t, "the answer on Telegram", func() bool {
		for _, s := range tg.Sent()[before:] {
			if strings.Contains(s.Plain, "The time is") {
				return true
			}
		}
		return false
	})
}

// assertCleanLogs fails when a clean stop logged an error.
func assertCleanLogs(t *testing.T, logs string) {
	t.Helper()
	for _, bad := range []string{"context canceled", `"level":"error"`} {
		if strings.Contains(strings.ToLower(logs), bad) {
			t.Errorf("a clean stop logged %q:\n%s", bad, logs)
		}
	}
}

// TestCleanStopLogsNoError: a bot with the console and Telegram, stopped by
// SIGTERM or SIGINT while idle, exits 0 and logs no error, in particular no
// "context canceled".
func TestCleanStopLogsNoError(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			tg := startTelegram(t)
			dir := t.TempDir()
			writeFile(t, dir, "config.yaml", telegramConfig(dir, tg))
			p := startBot(t, dir, baseEnv(dir))
			p.send("what time is it")
			expectLine(t, p, "The time is")
			askTelegram(t, tg)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(); code != 0 {
				t.Fatalf("exit %d; want 0", code)
			}
			assertCleanLogs(t, p.stderr.String())
		})
	}
}

// TestPipedEOFClosesOnlyTheConsole: stdin that is not a terminal ending
// (a service's empty stdin) closes the console alone: Telegram goes on
// answering until the bot is stopped, and the stop is clean.
func TestPipedEOFClosesOnlyTheConsole(t *testing.T) {
	t.Parallel()
	tg := startTelegram(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", telegramConfig(dir, tg))
	p := startBot(t, dir, baseEnv(dir))
	p.send("what time is it")
	expectLine(t, p, "The time is")
	p.closeInput()
	askTelegram(t, tg)
	select {
	case <-p.done:
		t.Fatalf("the bot stopped at the end of piped input although Telegram runs: %v", p.state)
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; want 0", code)
	}
	assertCleanLogs(t, p.stderr.String())
}
