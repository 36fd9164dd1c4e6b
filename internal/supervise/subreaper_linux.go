package supervise

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// harden makes the calling process the child subreaper of its descendants
// (orphans are reparented to it, not to init) and not dumpable, so that a
// process of the same user cannot read its memory or environment from
// /proc, as the bot does for itself. The command it starts is dumpable
// again after its execve.
func harden() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	return nil
}
