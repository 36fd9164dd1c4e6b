package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	fakeopenai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
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

// termBot is the bot running on a pseudo-terminal as its controlling
// terminal, as when a user starts it from a shell: stdin, stdout and
// stderr are the terminal, and Ctrl-C there interrupts it.
type termBot struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd
	out    *testutil.SyncBuffer
	copied chan struct{}
	done   chan struct{}
	err    error
}

// startOnTerminal starts the bot in dir with a fresh pseudo-terminal as
// its controlling terminal and its stdin, stdout and stderr.
func startOnTerminal(t *testing.T, dir string) *termBot {
	t.Helper()
	return &startTermCmd(t, dir, baseEnv(dir, "TERM=xterm"), "run").termBot
}

// typeIn writes s to the terminal as keys typed or pasted.
func (b *termBot) typeIn(s string) {
	b.t.Helper()
	if _, err := b.master.Write([]byte(s)); err != nil {
		b.t.Fatalf("typing on the terminal: %v", err)
	}
}

// expect waits until the terminal has shown sub n times in all.
func (b *termBot) expect(sub string, n int) {
	b.t.Helper()
	testutil.WaitFor(b.t, fmt.Sprintf("%q shown %d times on the terminal", sub, n), func() bool {
		return strings.Count(b.out.String(), sub) >= n
	})
}

// exit waits for the bot to exit and returns its exit code.
func (b *termBot) exit() int {
	b.t.Helper()
	select {
	case <-b.done:
	case <-time.After(hangGuard):
		b.t.Fatalf("bot did not exit (hang guard %s):\n%s", hangGuard, tail(b.out.String(), 2000))
	}
	var exitErr *exec.ExitError
	if errors.As(b.err, &exitErr) {
		return exitErr.ExitCode()
	}
	if b.err != nil {
		b.t.Fatal(b.err)
	}
	return 0
}

// assertCanonical fails the test unless the terminal is back in the mode a
// shell expects: lines edited by the terminal, typed keys echoed.
func (b *termBot) assertCanonical() {
	b.t.Helper()
	tio, err := unix.IoctlGetTermios(int(b.master.Fd()), unix.TCGETS)
	if err != nil {
		b.t.Fatal(err)
	}
	if tio.Lflag&unix.ICANON == 0 || tio.Lflag&unix.ECHO == 0 {
		b.t.Errorf("the bot left the terminal without line editing or echo (lflag %#o)", tio.Lflag)
	}
}

// TestTerminalTakesALongPasteWhole: on a terminal, a pasted line was cut
// at 4,095 bytes without a word (the terminal's line editing holds no
// more), so the model got a truncated message and a line past
// engine.max_message was never refused. Now a 10,000-byte paste reaches
// the model whole, a 20,000-byte one is refused with the engine's message,
// backspace still edits the line, Ctrl-D quits, and the terminal is left
// as it was found.
func TestTerminalTakesALongPasteWhole(t *testing.T) {
	t.Parallel()
	srv := startFake(t, func(fakeopenai.Request) fakeopenai.Step { return fakeopenai.Text("MODEL: ok.") })
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", fakeConfig(srv.URL(), "sk-test", shellApprove, "warn"))
	b := startOnTerminal(t, dir)
	b.expect("you › ", 1)

	long := strings.Repeat("0123456789", 999) + "end!" // 9,994 bytes, not cut at 4,095
	b.typeIn(long + "\r")
	b.expect("MODEL: ok.", 1)
	if got := srv.Requests()[0].LastUser(); got != long {
		t.Errorf("the model got a %d-byte message ending %q; want the %d-byte paste whole", len(got), tail(got, 20), len(long))
	}

	b.typeIn("hellp\x7fo worr\bld\r") // DEL and ^H both erase
	b.expect("MODEL: ok.", 2)
	if got := srv.Requests()[1].LastUser(); got != "hello world" {
		t.Errorf("after backspaces the model got %q; want %q", got, "hello world")
	}

	b.typeIn(strings.Repeat("x", 20000) + "\r")
	b.expect("Your message is 20000 bytes; the limit is 16384 bytes (engine.max_message)", 1)
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests to the model; the line past engine.max_message reached it", n)
	}

	b.expect("you › ", 4)
	b.typeIn("\x04")
	if code := b.exit(); code != 0 {
		t.Errorf("exit %d after Ctrl-D; want 0:\n%s", code, tail(b.out.String(), 2000))
	}
	b.assertCanonical()
}

// TestTerminalCtrlCStops: Ctrl-C at the prompt stops the bot (the terminal
// still turns it into SIGINT) and leaves the terminal as it was found.
func TestTerminalCtrlCStops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "config.yaml", offlineConfig(t))
	b := startOnTerminal(t, dir)
	b.expect("you › ", 1)
	b.typeIn("half a line")
	b.typeIn("\x03")
	if code := b.exit(); code != 0 {
		t.Errorf("exit %d after Ctrl-C; want 0:\n%s", code, tail(b.out.String(), 2000))
	}
	b.assertCanonical()
}
