package supervise

import (
	"fmt"
	"os"
)

// Choose resolves the tools.sandbox setting on this machine: "off", or
// "workspace-write", or "" / "auto" for workspace-write where the kernel
// supports it. It returns the sandbox to use and the warnings an operator
// must see at start-up and in `bot doctor`; nothing is weakened silently:
//
//   - auto on a kernel without the needed Landlock: off, with a warning;
//   - workspace-write on such a kernel: kept, so every shell call fails
//     with the reason (fail closed), with a warning;
//   - a sandbox as root: a warning that Landlock cannot keep a root
//     command from reading other processes' environments.
func Choose(setting string) (Sandbox, []string) {
	var warnings []string
	sb := SandboxWorkspaceWrite
	switch setting {
	case "off":
		return SandboxOff, nil
	case "", "auto":
		if _, err := Support(); err != nil {
			return SandboxOff, []string{fmt.Sprintf("shell commands run unsandboxed: %v (set tools.sandbox: off to say this is intended)", err)}
		}
	case "workspace-write":
		if _, err := Support(); err != nil {
			warnings = append(warnings, fmt.Sprintf("tools.sandbox is workspace-write but %v: every shell command will fail until the kernel supports it or tools.sandbox is off", err))
		}
	default:
		return SandboxOff, []string{fmt.Sprintf("tools.sandbox: unknown value %q", setting)}
	}
	if os.Geteuid() == 0 {
		warnings = append(warnings, "as root, the shell sandbox still confines writes, but cannot keep a command from reading other processes' environments (/proc/<pid>/environ)")
	}
	return sb, warnings
}
