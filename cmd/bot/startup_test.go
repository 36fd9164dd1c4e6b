package main

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestStartupTraceListsThePhases: `bot run -trace-startup` prints each
// phase of the start-up with its duration, in order, from the
// configuration to Telegram's first getUpdates, then the total; without the
// flag it prints none of it. No duration is asserted, only that each is
// there.
func TestStartupTraceListsThePhases(t *testing.T) {
	t.Parallel()
	tg := faketg.New(faketg.Options{MaxPollWait: 50 * time.Millisecond})
	t.Cleanup(tg.Close)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fmt.Sprintf(`gateways:
  console: {enabled: false}
  telegram: {token: %q, api_url: %q}
hitl: {approvers: ["telegram:42"]}
tools: {workspace: ./workspace}
store: {dsn: gatehouse.db}
log: {level: info, format: json}
`, tg.Token(), tg.URL()))
	phases := []string{
		"configuration", "logger", "store: lock, file, writer", "store: schema",
		"build: store open", "build: tooling", "build: people", "build: engine", "build: approvals",
		"telegram: getMe", "build: edges", "run: instance name claimed", "run: approvals recovered",
		"run: everything started", "telegram: update offset read", "telegram: first getUpdates",
	}
	line := regexp.MustCompile(`^startup: +[0-9]+\.[0-9]{2}ms +\+[0-9]+\.[0-9]{2}ms  (.+)$`)
	for _, run := range []string{"new database", "existing database"} {
		p := startBot(t, dir, baseEnv(dir), "run", "-trace-startup")
		testutil.WaitFor(t, "the trace's total ("+run+")", func() bool {
			return strings.Contains(p.stderr.String(), "total to the first receive")
		})
		var got []string
		for l := range strings.SplitSeq(p.stderr.String(), "\n") {
			if m := line.FindStringSubmatch(l); m != nil {
				got = append(got, m[1])
			}
		}
		next := 0
		for _, g := range got {
			if next < len(phases) && strings.HasPrefix(g, phases[next]) {
				next++
			}
		}
		if next < len(phases) {
			t.Fatalf("%s: the trace lacks %q (or has it out of order); its phases:\n%s", run, phases[next], strings.Join(got, "\n"))
		}
		if !regexp.MustCompile(`(?m)^startup: [0-9]+\.[0-9]{2}ms total to the first receive$`).MatchString(p.stderr.String()) {
			t.Fatalf("%s: no total line:\n%s", run, p.stderr.String())
		}
		p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // waited for below
		if code := p.wait(); code != 0 {
			t.Fatalf("%s: exit %d", run, code)
		}
	}

	p := startBot(t, dir, baseEnv(dir), "run")
	polls := len(tg.Polls())
	testutil.WaitFor(t, "a poll without the flag", func() bool { return len(tg.Polls()) > polls })
	p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // waited for below
	p.wait()
	if strings.Contains(p.stderr.String(), "startup:") {
		t.Fatalf("a trace without -trace-startup:\n%s", p.stderr.String())
	}
}
