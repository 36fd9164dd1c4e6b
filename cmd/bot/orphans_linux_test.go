package main

import (
	"crypto/rand"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestNoOrphansAfterTheBotDies: an approved shell command that detached a
// process (setsid) and is still running when the bot dies — by SIGKILL,
// or by a second SIGINT during the shutdown grace — leaves no process
// behind: the supervisor of the call is told by Pdeathsig and kills its
// whole tree. The processes carry a marker in their environment, so /proc
// finds them wherever they were reparented.
func TestNoOrphansAfterTheBotDies(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"SIGKILL", "second SIGINT"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			kv := "GH_MARK=" + strings.ToLower(rand.Text())
			const trigger = "start a daemon"
			command := kv + " setsid sleep 1000 >/dev/null 2>&1 & " + kv + " setsid sh -c 'sleep 1001 & sleep 1002' >/dev/null 2>&1 & " + kv + " sleep 1003"
			srv := startFake(t, scriptedModel(trigger, command))
			dir := t.TempDir()
			writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "sk-test", shellApprove, "info"))
			p := startBot(t, dir, baseEnv(dir))
			t.Cleanup(func() { killMarked(kv) })
			p.send(trigger)
			p.send("/approve " + expectToken(t, p))
			testutil.WaitFor(t, "the command's processes", func() bool { return len(testutil.ProcsWithEnv(kv)) >= 5 })
			switch how {
			case "SIGKILL":
				p.kill9()
			default:
				if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatalf("first SIGINT: %v", err)
				}
				testutil.WaitFor(t, "the stopping notice", func() bool { return strings.Contains(p.stderr.String(), "a second Ctrl-C") })
				if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatalf("second SIGINT: %v", err)
				}
				p.wait()
			}
			testutil.WaitFor(t, "every process of the command to be gone", func() bool { return len(testutil.ProcsWithEnv(kv)) == 0 })
		})
	}
}

// killMarked kills what a failed test left running.
func killMarked(kv string) {
	for _, pid := range testutil.ProcsWithEnv(kv) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
