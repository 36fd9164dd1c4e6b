// Package supervise runs one shell command so that nothing it starts
// outlives it. The bot re-executes its own binary with the hidden first
// argument Arg; that process, the supervisor, makes itself the child
// subreaper (PR_SET_CHILD_SUBREAPER) of the command alone, so children that
// detach (setsid, double fork, nohup … &) are reparented to it rather than
// to init, and it kills and reaps every one of them when the command ends,
// when it is signalled (the bot's cancel sends SIGTERM) and when the bot
// dies (the bot starts it with Pdeathsig SIGTERM). With a Sandbox, the
// command runs in a Landlock domain (see sandbox.go) that the supervisor is
// not in, so it can neither signal the supervisor nor read its memory.
//
// The same binary is the supervisor on Linux only; Main must be called at
// the very top of main, before anything else runs.
package supervise

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// Arg is the hidden first argument that makes the binary a supervisor.
const Arg = "__supervise"

// Exit codes of the supervisor itself, beside the command's own status
// (128+N when the command was killed by signal N, as sh reports it).
const (
	// ExitSetup: the supervisor could not start the command or apply the
	// sandbox; stderr says why.
	ExitSetup = 125
	// ExitSignalled: the supervisor was told to stop (SIGTERM, SIGINT,
	// SIGHUP) and killed the command's tree.
	ExitSignalled = 143
)

// Spec is one supervised command.
type Spec struct {
	// Command is run as /bin/sh -c Command.
	Command string
	// Dir is the command's working directory.
	Dir string
	// Env is the command's environment (the caller scrubs it).
	Env []string
	// Sandbox confines the command; the zero value is SandboxOff.
	Sandbox Sandbox
	// Workspace is the directory a sandboxed command may write.
	Workspace string
}

// Command returns the supervisor process for s, started from the binary
// exe (normally os.Executable()): in its own process group, sent SIGTERM
// when the bot dies (Pdeathsig) and when ctx ends (the supervisor then
// kills the whole tree). The caller sets Stdout and Stderr, starts it and
// waits for it on the same locked OS thread: Pdeathsig fires when the
// thread that started the child exits, so the caller must hold
// runtime.LockOSThread from Start to Wait.
func Command(ctx context.Context, exe string, s Spec) *exec.Cmd {
	args := []string{Arg, "-mode=supervise", "-sandbox=" + s.Sandbox.String(), "-workspace=" + s.Workspace, "--", s.Command}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	return cmd
}

// Main runs the supervisor (or, inside it, the sandbox stage) with the
// arguments that follow Arg, and returns the process's exit code.
func Main(args []string) int {
	fs := flag.NewFlagSet(Arg, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mode := fs.String("mode", "supervise", "")
	sandbox := fs.String("sandbox", "off", "")
	workspace := fs.String("workspace", "", "")
	tmp := fs.String("tmp", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "supervise: usage: "+Arg+" [-mode m] [-sandbox s] [-workspace dir] -- command")
		return ExitSetup
	}
	sb, err := ParseSandbox(*sandbox)
	if err != nil {
		fmt.Fprintln(os.Stderr, "supervise:", err)
		return ExitSetup
	}
	command := fs.Arg(0)
	switch *mode {
	case "supervise":
		return supervise(command, sb, *workspace)
	case "sandbox":
		// Only returns on failure: success replaces the process with sh.
		err := execSandboxed(command, *workspace, *tmp)
		fmt.Fprintln(os.Stderr, "supervise: sandbox:", err)
		return ExitSetup
	}
	fmt.Fprintf(os.Stderr, "supervise: unknown mode %q\n", *mode)
	return ExitSetup
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
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("executable: %w", err)
	}
	tmp, err := os.MkdirTemp("", "gatehouse-shell-")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("temp dir: %w", err)
	}
	env = append(withoutVar(env, "TMPDIR"), "TMPDIR="+tmp)
	argv = []string{exe, Arg, "-mode=sandbox", "-sandbox=" + sb.String(), "-workspace=" + workspace, "-tmp=" + tmp, "--", command}
	return argv, env, func() { _ = os.RemoveAll(tmp) }, nil
}

// withoutVar drops the variable name from env.
func withoutVar(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if len(kv) > len(name) && kv[:len(name)+1] == name+"=" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// devNull is the command's stdin: it reads nothing and never waits.
func devNull() *os.File {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil // no stdin at all: the child sees fd 0 closed
	}
	return f
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

// exitCode is sh's convention: the status, or 128+N for signal N.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
