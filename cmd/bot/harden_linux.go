package main

import (
	"fmt"
	"os"
	"syscall"
)

// hardenProcess marks the process not dumpable (prctl PR_SET_DUMPABLE 0):
// /proc/<pid>/environ, mem and the like become readable only by root, so a
// child the shell tool starts, running as the same user, cannot read the
// bot's environment and with it its secrets. It does not protect against
// root, nor when the bot itself runs as root. A failure is reported and the
// bot runs on: it is hardening, not a precondition.
func hardenProcess() {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "bot: warning: prctl(PR_SET_DUMPABLE, 0): %v; tools may read the bot's environment from /proc\n", errno)
	}
}
