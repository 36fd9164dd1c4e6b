package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// TestRunRefusedTokenFailsTheStart: getMe now starts beside the store's
// open (gateways.Preparer), and a token Telegram refuses still stops the
// start-up before the bot runs: one line on stderr (besides the logs) naming the gateway and
// getMe, without the token, exit 1, and no getUpdates.
func TestRunRefusedTokenFailsTheStart(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	dir := t.TempDir()
	const refused = "555555:TEST-a-token-the-fake-refuses-0000000"
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q}
hitl: {approvers: ["telegram:42"]}
tools: {workspace: ./workspace}
store: {dsn: gatehouse.db}
`, refused, tg.URL()))
	r := runOnce(t, dir, baseEnv(dir), "", "run")
	if r.code != exitFail {
		t.Fatalf("exit %d; want %d\nstderr:\n%s", r.code, exitFail, r.stderr)
	}
	var said []string // the refusal's lines; the rest are the logger's warnings
	for l := range strings.Lines(r.stderr) {
		if strings.HasPrefix(l, "bot: ") {
			said = append(said, l)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "gateways.telegram") || !strings.Contains(said[0], "getMe") || !strings.Contains(said[0], "Unauthorized") {
		t.Errorf("stderr = %q; want one line naming gateways.telegram, getMe and Telegram's answer", r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, "TEST-a-token") {
		t.Errorf("the token is in the output:\n%s%s", r.stdout, r.stderr)
	}
	if n := len(tg.Polls()); n != 0 {
		t.Errorf("%d getUpdates with a refused token", n)
	}
}
