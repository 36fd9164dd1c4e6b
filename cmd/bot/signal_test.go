package main

import (
	"strings"
	"syscall"
	"testing"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestSignalWhileIdle: SIGTERM or SIGINT to an idle bot, whose input is
// still open, stops it cleanly with exit 0.
func TestSignalWhileIdle(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "config.yaml", offlineConfig(t))
			p := startBot(t, dir, baseEnv(dir))
			p.send("what time is it")
			expectLine(t, p, "The time is") // running, and idle once answered
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatalf("signal bot: %v", err)
			}
			if code := p.wait(); code != 0 {
				t.Fatalf("exit %d after %v while idle; want 0", code, sig)
			}
			if strings.Contains(p.stderr.String(), `"level":"error"`) {
				t.Errorf("errors logged on a clean stop:\n%s", p.stderr.String())
			}
		})
	}
}

// TestSecondSignalStopsAtOnce: while a turn is still running in the
// shutdown grace period, a second SIGINT kills the bot the default way
// instead of being swallowed.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	t.Parallel()
	const trigger = "think for a long time"
	srv := startFake(t, func(r fakeopenai.Request) fakeopenai.Step {
		if lastMessage(r).Content == trigger {
			return fakeopenai.Hang()
		}
		return fakeopenai.Text("MODEL: ok.")
	})
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "sk-test", shellApprove, "info"))
	p := startBot(t, dir, baseEnv(dir))
	p.send(trigger)
	testutil.WaitFor(t, "the model request", func() bool { return len(srv.Requests()) > 0 })
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("first SIGINT: %v", err)
	}
	// The bot says it is stopping once the first signal is handled; the
	// turn in flight holds it in the grace period.
	testutil.WaitFor(t, "the stopping notice", func() bool { return strings.Contains(p.stderr.String(), "a second Ctrl-C") })
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("second SIGINT: %v", err)
	}
	p.wait()
	if ws, ok := p.state.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Fatalf("bot ended with %v; want killed by the second SIGINT", p.state)
	}
}
