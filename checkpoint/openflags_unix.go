//go:build unix

package checkpoint

import "syscall"

// oNoFollow refuses a symlink swapped in for a workspace file between the
// scan and the open.
const oNoFollow = syscall.O_NOFOLLOW
