package supervise

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// Command returns `sh -c command`, with the sh found on PATH (Git for
// Windows' or MSYS2's), killed when ctx ends. Windows has neither process
// groups to kill as one nor a child subreaper: there is no supervisor, and
// whatever the command starts in the background can outlive the call.
// Sandbox is not applied: Choose reports that Landlock is unsupported here.
func Command(ctx context.Context, _ string, s Spec) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", "-c", s.Command)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	return cmd
}

// supervise is Linux's alone.
func supervise(string, Sandbox, string) int {
	fmt.Fprintln(os.Stderr, "supervise: needs Linux")
	return ExitSetup
}
