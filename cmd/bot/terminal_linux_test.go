package main

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestPipedInputOnTerminalKeepsLogsQuiet: the README's `printf 'hello\n' |
// go run ./cmd/bot` prints the chat and the logs on the same terminal. Only
// warnings may show there, as when the user types; info logs (a "signal"
// and an "act" line for every message) interleaved with the replies. -v
// shows them again.
func TestPipedInputOnTerminalKeepsLogsQuiet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))

	out := runOnTerminal(t, dir, "what time is it\n")
	if !strings.Contains(out, "The time is") {
		t.Fatalf("no answer on the terminal:\n%s", out)
	}
	for _, noise := range []string{"INF", "gatehouse running"} {
		if strings.Contains(out, noise) {
			t.Errorf("an info log line (%q) shares the terminal with the chat:\n%s", noise, out)
		}
	}
	if !strings.Contains(out, "offline DEMO model") {
		t.Errorf("the demo model warning is missing:\n%s", out)
	}

	if out := runOnTerminal(t, dir, "what time is it\n", "-v"); !strings.Contains(out, "gatehouse running") {
		t.Errorf("-v shows no info logs on the terminal:\n%s", out)
	}
}

// runOnTerminal runs the bot with input piped to its stdin and its stdout
// and stderr on a fresh pseudo-terminal, until it exits; it returns what
// the terminal showed.
func runOnTerminal(t *testing.T, dir, input string, args ...string) string {
	t.Helper()
	master, slave := testutil.OpenPTY(t)
	defer master.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, botBin, append([]string{"run"}, args...)...)
	cmd.Dir, cmd.Env = dir, baseEnv(dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = strings.NewReader(input)
	cmd.Stdout, cmd.Stderr = slave, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, master); close(copied) }() // ends with EIO once the bot is gone
	err := cmd.Wait()
	<-copied
	if ctx.Err() != nil {
		t.Fatalf("bot hung (hang guard %s):\n%s", hangGuard, out.String())
	}
	if err != nil {
		t.Fatalf("bot: %v\n%s", err, out.String())
	}
	return out.String()
}
