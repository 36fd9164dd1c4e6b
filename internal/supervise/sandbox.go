package supervise

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Sandbox is how a shell command is confined.
type Sandbox int

// Sandboxes.
const (
	// SandboxOff runs the command with the bot's own rights.
	SandboxOff Sandbox = iota
	// SandboxWorkspaceWrite lets the command read the whole system but
	// write only the workspace, its private TMPDIR and a few devices
	// (/dev/null, /dev/zero, /dev/full, /dev/tty); it cannot signal, trace
	// or read the memory or /proc/<pid>/environ of any process outside its
	// sandbox (the supervisor and the bot included), nor reach their
	// abstract unix sockets. Network access is not restricted.
	SandboxWorkspaceWrite
)

// MinABI is the Landlock ABI SandboxWorkspaceWrite needs: 6 adds the
// signal and abstract-socket scoping to the file-system rights of 1–5.
const MinABI = 6

// String is the configuration's name of s.
func (s Sandbox) String() string {
	if s == SandboxWorkspaceWrite {
		return "workspace-write"
	}
	return "off"
}

// ParseSandbox parses a configuration's name of a Sandbox.
func ParseSandbox(name string) (Sandbox, error) {
	switch name {
	case "off":
		return SandboxOff, nil
	case "workspace-write":
		return SandboxWorkspaceWrite, nil
	}
	return SandboxOff, fmt.Errorf("unknown sandbox %q (want workspace-write or off)", name)
}

// ErrUnsupported: the kernel's Landlock cannot give SandboxWorkspaceWrite.
var ErrUnsupported = errors.New("landlock unsupported")

// Support reports the kernel's Landlock ABI version, and ErrUnsupported
// (saying why) when it is below MinABI or Landlock is disabled.
func Support() (int, error) {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("%w: the kernel has no Landlock (%w)", ErrUnsupported, err)
	}
	if abi < MinABI {
		return abi, fmt.Errorf("%w: the kernel has Landlock ABI %d, the sandbox needs %d (Linux 6.12 or later)", ErrUnsupported, abi, MinABI)
	}
	return abi, nil
}

// workspaceWrite is SandboxWorkspaceWrite's ruleset: the file-system rights
// and scopes of ABI 6, no network rights.
var workspaceWrite = landlock.MustConfig(landlock.V6.HandledAccessFS, landlock.V6.Scoped)

// execSandboxed confines the process (all its threads) and replaces it
// with /bin/sh -c command. It returns only on failure. A kernel without
// the needed ABI is an error: the sandbox is never weakened silently.
func execSandboxed(command, workspace, tmp string) error {
	if _, err := Support(); err != nil {
		return err
	}
	if workspace == "" || tmp == "" {
		return errors.New("workspace and temp directory are required")
	}
	err := workspaceWrite.Restrict(
		landlock.RODirs("/"),
		landlock.RWDirs(workspace, tmp),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty").IgnoreIfMissing(),
	)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return syscall.Exec("/bin/sh", []string{"sh", "-c", command}, os.Environ())
}
