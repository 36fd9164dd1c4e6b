package main

import (
	"strings"
	"syscall"
	"testing"
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
