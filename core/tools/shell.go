package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// Shell defaults.
const (
	// ShellTimeout is the shell tool's own timeout.
	ShellTimeout = 300 * time.Second
	// shellStreamMax caps stdout and stderr each; two of them fit the
	// registry's default output cap.
	shellStreamMax = 8 << 10
	// shellWaitDelay bounds the wait for output after the shell exited while
	// a background child still holds its stdout or stderr open.
	shellWaitDelay = time.Second
)

// shell is the shell tool.
type shell struct {
	dir         string
	secrets     *secrets.Set
	envPrefixes []string
}

// NewShell returns the shell tool: it runs `sh -c command` in the workspace
// directory with an environment scrubbed of secrets, in its own process
// group, which is killed when the command ends, times out or is cancelled.
// Variables whose names start with one of envPrefixes (the gateways'
// own, from the gateway table) are kept from commands too.
func NewShell(workspace string, secrets *secrets.Set, envPrefixes ...string) Tool {
	if abs, err := filepath.Abs(workspace); err == nil {
		workspace = abs
	}
	return shell{dir: workspace, secrets: secrets, envPrefixes: envPrefixes}
}

// Spec describes shell.
func (shell) Spec() Spec {
	return Spec{
		Name:        "shell",
		Description: "Run a shell command in the workspace.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		Timeout:     ShellTimeout,
	}
}

// Run runs the command. A non-zero exit is reported through ErrFailed with
// the exit status and output; only a command that could not start is a
// plain error.
func (t shell) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		Command string `json:"command"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Command) == "" {
		return "", fmt.Errorf("%w: empty command", ErrInvalidArgs)
	}
	cmd := t.command(ctx, a.Command)
	stdout := &cappedBuffer{max: shellStreamMax}
	stderr := &cappedBuffer{max: shellStreamMax}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("shell: start: %w", err)
	}
	err := cmd.Wait()
	// Background children ("sleep 100 &") die with the command.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return t.report(cmd, err, stdout, stderr)
}

// command builds the child process: own process group, killed as a group
// when ctx ends.
func (t shell) command(ctx context.Context, command string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = t.dir
	cmd.Env = scrubEnv(t.secrets, t.envPrefixes)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			return os.ErrProcessDone
		}
		return nil
	}
	cmd.WaitDelay = shellWaitDelay
	return cmd
}

// report renders "exit N", then the non-empty streams.
func (t shell) report(cmd *exec.Cmd, waitErr error, stdout, stderr *cappedBuffer) (string, error) {
	code := cmd.ProcessState.ExitCode()
	var b strings.Builder
	fmt.Fprintf(&b, "exit %d", code)
	if code < 0 {
		b.WriteString(" (killed)")
	}
	for _, s := range []struct {
		name string
		buf  *cappedBuffer
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if out := s.buf.String(); out != "" {
			b.WriteString("\n--- " + s.name + "\n" + strings.TrimSuffix(out, "\n"))
		}
	}
	out := t.secrets.Redact(b.String())
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil || errors.Is(waitErr, exec.ErrWaitDelay):
		if code != 0 {
			return out, fmt.Errorf("%w: exit status %d", ErrFailed, code)
		}
		return out, nil
	case errors.As(waitErr, &exitErr):
		return out, fmt.Errorf("%w: %w", ErrFailed, waitErr)
	}
	return out, fmt.Errorf("shell: %w", waitErr)
}
