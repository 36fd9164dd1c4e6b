package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/pgtest"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// poll reads the stdout lines the bot has printed so far, without
// waiting, and returns all of them.
func (p *botProc) poll() string {
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return p.stdout()
			}
			p.seen = append(p.seen, line)
		default:
			return p.stdout()
		}
	}
}

// processRuns reports whether pid is a live process (not gone, not a
// zombie waiting to be reaped).
func processRuns(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, ok := strings.Cut(string(b), ") ")
	return ok && !strings.HasPrefix(after, "Z")
}

// TestApprovalsClusterRunnerCutOff: two bots on one database, A reaching
// it through a proxy the test cuts while A runs an approved shell call
// (changing the workspace) for longer than store.lease_ttl. A stops the
// call, its process included, before B may restore the workspace (/undo,
// tried all along the cut) or announce the call interrupted; and once
// the database is back, A does not announce it ran: the approval has one
// outcome, in chat and in the audit. Before, A's call went on writing
// after B had restored the workspace and announced it interrupted, and A
// then announced "ran" and audited it executed too.
func TestApprovalsClusterRunnerCutOff(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	proxy, viaProxy := pgtest.NewProxy(t, dsn)
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", clusterConfig(t))
	envA := baseEnv(dir, "GATEHOUSE_DSN="+viaProxy, "GATEHOUSE_INSTANCE=a")
	envB := baseEnv(dir, "GATEHOUSE_DSN="+dsn, "GATEHOUSE_INSTANCE=b")
	ws := filepath.Join(dir, "workspace")

	a := startBot(t, dir, envA)
	b := startBot(t, dir, envB)
	b.send("what time is it")
	expectLine(t, b, "The time is") // B is up and sweeping
	a.send("run `echo $$ > sh.pid; echo start >> started.txt; sleep 60`")
	expectLine(t, a, "Approval needed: shell")
	token := expectToken(t, a)
	a.send("/approve " + token)
	expectLine(t, a, "Approved: running")
	testutil.WaitFor(t, "the approved call to start", func() bool { return readFile(t, filepath.Join(ws, "started.txt")) == "start\n" })
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(ws, "sh.pid"))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if processRuns(pid) {
			syscall.Kill(-pid, syscall.SIGKILL) //nolint:errcheck // the test's own leftover
		}
	})

	proxy.Cut()
	// /undo on B, again each time it is refused, until it restores.
	b.send("/undo")
	sent := 1
	testutil.WaitFor(t, "B's /undo to restore the workspace", func() bool {
		out := b.poll()
		if strings.Contains(out, "Restored the workspace") {
			return true
		}
		if strings.Count(out, "is running on instance a") >= sent {
			b.send("/undo")
			sent++
		}
		return false
	})
	if processRuns(pid) {
		t.Fatalf("B restored the workspace while A's approved call (pid %d) still ran", pid)
	}
	// B's sweep may announce the interruption before its /undo restores
	// (both read off its output by poll above): look at all it printed.
	testutil.WaitFor(t, "B to announce the call interrupted", func() bool { return strings.Contains(b.poll(), "Interrupted: ") })
	if processRuns(pid) {
		t.Fatalf("B announced the call interrupted while A's process (pid %d) still ran", pid)
	}

	proxy.Restore()
	testutil.WaitFor(t, "A to find the run's end recorded by B", func() bool {
		return strings.Contains(a.stderr.String(), "recorded elsewhere first")
	})
	for _, p := range []*botProc{a, b} {
		p.closeInput()
		if code := p.wait(); code != 0 {
			t.Fatalf("exit %d after end of input; want 0", code)
		}
	}
	if out := a.stdout(); strings.Contains(out, "Approved by console:local") || strings.Contains(out, " ran") {
		t.Errorf("A announced an outcome of the call B announced interrupted:\n%s", out)
	}
	if n := strings.Count(b.stdout(), "Interrupted: "); n != 1 {
		t.Errorf("B announced the interruption %d times; want once", n)
	}
	got := auditOutcomes(t, dir, envB)
	if got["approved"] != 1 || got["interrupted"] != 1 || got["executed"] != 0 || got["failed"] != 0 {
		t.Errorf("audit of the shell call: %v; want approved 1, interrupted 1, nothing else", got)
	}
}
