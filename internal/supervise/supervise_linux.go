package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// self is the running binary, even when its file was replaced or removed
// since it started (an upgrade while the bot runs).
const self = "/proc/self/exe"

// Command returns the supervisor process for s, started from the binary
// exe (empty: the running binary itself): in a session of its own, so
// that neither it nor the command has the bot's terminal as controlling
// terminal (a command could read what is typed there, or type into it
// with TIOCSTI), sent SIGTERM
// when the bot dies (Pdeathsig) and when ctx ends (the supervisor then
// kills the whole tree). The caller sets Stdout and Stderr, starts it and
// waits for it on the same locked OS thread: Pdeathsig fires when the
// thread that started the child exits, so the caller must hold
// runtime.LockOSThread from Start to Wait.
func Command(ctx context.Context, exe string, s Spec) *exec.Cmd {
	if exe == "" {
		exe = self
	}
	args := []string{Arg, "-mode=supervise", "-sandbox=" + s.Sandbox.String(), "-workspace=" + s.Workspace, "--", s.Command}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	return cmd
}

// supervise starts the command (through the sandbox stage when sb asks for
// one), waits for it or for a stop signal, then kills and reaps every
// descendant and returns the command's status.
func supervise(command string, sb Sandbox, workspace string) int {
	runtime.LockOSThread() // the children's Pdeathsig follows this thread
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := harden(); err != nil {
		fmt.Fprintln(os.Stderr, "supervise:", err)
		return ExitSetup
	}
	argv, env, cleanup, err := childCommand(command, sb, workspace)
	if err != nil {
		fmt.Fprintln(os.Stderr, "supervise:", err)
		return ExitSetup
	}
	defer cleanup()
	attr := &os.ProcAttr{
		Env:   env,
		Files: []*os.File{devNull(), os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	child, err := os.StartProcess(argv[0], argv, attr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "supervise: start:", err)
		return ExitSetup
	}
	exited := make(chan syscall.WaitStatus, 1)
	allGone := make(chan struct{})
	go reap(child.Pid, exited, allGone)
	code := ExitSignalled
	select {
	case ws := <-exited:
		code = exitCode(ws)
	case <-sigs:
	}
	killTree(allGone)
	return code
}

// childCommand returns the argv and environment of the supervised child:
// sh itself, or the sandbox stage that confines itself and then becomes
// sh. The sandbox gets a private TMPDIR, removed by cleanup.
func childCommand(command string, sb Sandbox, workspace string) (argv, env []string, cleanup func(), err error) {
	env = os.Environ()
	if sb == SandboxOff {
		return []string{"/bin/sh", "-c", command}, env, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "gatehouse-shell-")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("temp dir: %w", err)
	}
	env = append(withoutVar(env, "TMPDIR"), "TMPDIR="+tmp)
	argv = []string{self, Arg, "-mode=sandbox", "-sandbox=" + sb.String(), "-workspace=" + workspace, "-tmp=" + tmp, "--", command}
	return argv, env, func() { _ = os.RemoveAll(tmp) }, nil
}

// reap waits for every child of the supervisor: the command's status goes
// to exited, and allGone closes when no child (orphans reparented here
// included) is left.
func reap(pid int, exited chan<- syscall.WaitStatus, allGone chan<- struct{}) {
	defer close(allGone)
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil: // ECHILD: nothing left to wait for
			return
		case got == pid:
			exited <- ws
		}
	}
}

// killTree sends SIGKILL to every descendant until none is left. A process
// that forks between two scans is caught by the next one: its children are
// reparented here when it dies.
func killTree(allGone <-chan struct{}) {
	self := os.Getpid()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, pid := range Descendants(self) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-allGone:
			return
		case <-tick.C:
		}
	}
}
