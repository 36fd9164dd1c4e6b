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
// The binary is the supervisor on Linux only. A process started with Arg
// first becomes the supervisor in this package's init (dispatch.go),
// before main runs, in the bot and in every test binary alike.
package supervise

import (
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
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

// exitCode is sh's convention: the status, or 128+N for signal N.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
