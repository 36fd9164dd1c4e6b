//go:build unix && !linux

package supervise

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Command returns `/bin/sh -c command` in its own process group, killed as
// a group when ctx ends: without Linux's child subreaper and Pdeathsig
// there is no supervisor, and a command that leaves its process group
// (setsid) can outlive the call. Sandbox is not applied: Choose reports
// that Landlock is unsupported here.
func Command(ctx context.Context, _ string, s Spec) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", s.Command)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			return os.ErrProcessDone
		}
		return nil
	}
	return cmd
}

// supervise is Linux's alone.
func supervise(string, Sandbox, string) int {
	fmt.Fprintln(os.Stderr, "supervise: needs Linux")
	return ExitSetup
}
