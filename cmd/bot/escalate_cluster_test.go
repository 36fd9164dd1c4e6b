package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
)

// expectEither reads the stdout lines of a and b until one contains sub,
// and returns which bot wrote it.
func expectEither(t *testing.T, sub string, a, b *botProc) *botProc {
	t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for {
		var p *botProc
		var line string
		var ok bool
		select {
		case line, ok = <-a.lines:
			p = a
		case line, ok = <-b.lines:
			p = b
		case <-guard.C:
			t.Fatalf("no line containing %q from either bot within the hang guard (%s)", sub, hangGuard)
		}
		if !ok {
			t.Fatalf("a bot's output ended before a line containing %q", sub)
		}
		p.seen = append(p.seen, line)
		if strings.Contains(line, sub) {
			return p
		}
	}
}

// TestEscalationClusterOnce: two bots on one PostgreSQL database, both
// sweeping; a request raised on A and answered by nobody is reminded
// once and escalated once between them (one conditional update each),
// whichever sweeps first: one reminder, one escalation line, audited
// once each.
func TestEscalationClusterOnce(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", withNudges(t, clusterConfig(t), "2s", `[{after: 4s, notify: ["console:local"]}]`))
	envA := baseEnv(dir, "GATEHOUSE_DSN="+dsn, "GATEHOUSE_INSTANCE=a")
	envB := baseEnv(dir, "GATEHOUSE_DSN="+dsn, "GATEHOUSE_INSTANCE=b")

	a := startBot(t, dir, envA)
	b := startBot(t, dir, envB)
	b.send("what time is it")
	expectLine(t, b, "The time is") // B is up and sweeping
	a.send("run `echo never >> runs.txt`")
	token := expectToken(t, a)
	expectEither(t, "escalated to console:local", a, b)
	for _, p := range []*botProc{a, b} {
		p.closeInput()
		if code := p.wait(); code != 0 {
			t.Fatalf("exit %d after end of input; want 0", code)
		}
	}
	both := a.stdout() + "\n" + b.stdout()
	if n := countLines(both, "Reminder: nobody has answered"); n != 1 {
		t.Errorf("%d reminders between the two bots; want 1\nA:\n%s\nB:\n%s", n, a.stdout(), b.stdout())
	}
	if n := countLines(both, "Nobody has answered request "+token); n != 1 {
		t.Errorf("%d escalation lines between the two bots; want 1\nA:\n%s\nB:\n%s", n, a.stdout(), b.stdout())
	}
	got := auditOutcomes(t, dir, envB)
	if got["reminded"] != 1 || got["escalated"] != 1 {
		t.Errorf("audit of the shell call: %v; want reminded 1, escalated 1", got)
	}
}
