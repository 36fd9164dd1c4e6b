package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/supervise"
)

// Shell defaults.
const (
	// ShellTimeout is the shell tool's own timeout.
	ShellTimeout = 300 * time.Second
	// shellStreamMax caps stdout and stderr each; two of them fit the
	// registry's default output cap.
	shellStreamMax = 8 << 10
	// shellWaitDelay is how long, after a cancel or timeout has sent the
	// supervisor SIGTERM, it has to kill and reap the command's tree before
	// os/exec kills the supervisor itself. That last resort must stay rare:
	// a SIGKILLed supervisor cannot kill the grandchildren it adopted, so
	// the delay is generous for a loaded machine (the supervisor normally
	// takes milliseconds, and its tree is dead before it exits, so no
	// stream is held open past it).
	shellWaitDelay = 30 * time.Second
)

// ShellOptions configure the shell tool.
type ShellOptions struct {
	// Workspace is the command's working directory.
	Workspace string
	// Secrets are kept out of the command's environment and output.
	Secrets *secrets.Set
	// Sandbox confines the command (default supervise.SandboxOff).
	Sandbox supervise.Sandbox
	// Supervisor is the executable run as each command's supervisor with
	// supervise.Arg first. Empty means the running binary itself: the bot,
	// or a test binary (linking this package makes it one).
	Supervisor string
	// EnvPrefixes are name prefixes of variables kept from commands besides
	// the secrets (the gateways' own, from the gateway table).
	EnvPrefixes []string
}

// shell is the shell tool.
type shell struct {
	opts ShellOptions
}

// NewShell returns the shell tool: it runs `sh -c command` in the workspace
// directory with an environment scrubbed of secrets, under a supervisor
// (internal/supervise) that kills every process the command started,
// detached ones included, when the command ends, times out or is
// cancelled, and when the bot dies.
func NewShell(o ShellOptions) Tool {
	if abs, err := filepath.Abs(o.Workspace); err == nil {
		o.Workspace = abs
	}
	return shell{opts: o}
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
	cmd := supervise.Command(ctx, t.opts.Supervisor, supervise.Spec{
		Command:   a.Command,
		Dir:       t.opts.Workspace,
		Env:       scrubEnv(t.opts.Secrets, t.opts.EnvPrefixes),
		Sandbox:   t.opts.Sandbox,
		Workspace: t.opts.Workspace,
	})
	cmd.WaitDelay = shellWaitDelay
	stdout := &cappedBuffer{max: shellStreamMax}
	stderr := &cappedBuffer{max: shellStreamMax}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The supervisor's Pdeathsig follows the OS thread that started it:
	// hold this one until it has been waited for.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("shell: start: %w", err)
	}
	err := cmd.Wait()
	if msg := stderr.String(); cmd.ProcessState.ExitCode() == supervise.ExitSetup && strings.HasPrefix(msg, "supervise: ") {
		// The supervisor could not start the command (or its sandbox).
		return "", fmt.Errorf("shell: %s", t.opts.Secrets.Redact(strings.TrimSpace(msg)))
	}
	return t.report(cmd, err, stdout, stderr)
}

// report renders "exit N", then the non-empty streams.
func (t shell) report(cmd *exec.Cmd, waitErr error, stdout, stderr *cappedBuffer) (string, error) {
	code := cmd.ProcessState.ExitCode()
	var b strings.Builder
	fmt.Fprintf(&b, "exit %d", code)
	if code < 0 || code > 128 {
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
	out := t.opts.Secrets.Redact(b.String())
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
