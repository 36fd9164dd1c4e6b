//go:build unix

package tools

import "syscall"

// Open flags the file tools add to their opens in the workspace: a final
// symlink is refused, not followed; a FIFO swapped in does not block, and
// is refused where a directory is expected.
const (
	oNoFollow  = syscall.O_NOFOLLOW
	oNonBlock  = syscall.O_NONBLOCK
	oDirectory = syscall.O_DIRECTORY
)
