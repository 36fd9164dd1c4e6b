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

// telegramConfig runs the console and Telegram against the fake Bot API.
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
			testutil.WaitFor(t, "a Telegram poll", func() bool { return len(tg.Polls()) > 0 })
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(); code != 0 {
				t.Fatalf("exit %d; want 0", code)
			}
			logs := p.stderr.String()
			for _, bad := range []string{"context canceled", `"level":"error"`} {
				if strings.Contains(strings.ToLower(logs), bad) {
					t.Errorf("a clean stop logged %q:\n%s", bad, logs)
				}
			}
		})
	}
}
