package tools

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestShellHasNoControllingTerminal: a command cannot open the terminal
// the bot runs on. In the bot's session it could: read what the operator
// types there and, with the TIOCSTI ioctl, type commands into the
// operator's shell, which runs them unsandboxed once the bot exits. The
// test runs itself again on a fresh pseudo-terminal as its controlling
// terminal, as a bot started from a shell is.
func TestShellHasNoControllingTerminal(t *testing.T) {
	if os.Getenv("GH_TTY_CHILD") == "1" {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			t.Fatalf("the test itself has no controlling terminal: %v", err)
		}
		tty.Close()
		out, err := runShell(t, context.Background(), NewShell(ShellOptions{Workspace: t.TempDir()}),
			"if (exec 3<>/dev/tty) 2>/dev/null; then echo TTY-OPEN; else echo NO-TTY; fi")
		if err != nil || !strings.Contains(out, "NO-TTY") {
			t.Fatalf("the command opened the bot's terminal: %q, %v", out, err)
		}
		return
	}
	master, slave := testutil.OpenPTY(t)
	defer master.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestShellHasNoControllingTerminal$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "GH_TTY_CHILD=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, master); close(copied) }() // ends with EIO once the child is gone
	err := cmd.Wait()
	<-copied
	if err != nil || !strings.Contains(out.String(), "--- PASS: TestShellHasNoControllingTerminal") {
		t.Fatalf("on a terminal: %v\n%s", err, out.String())
	}
}
