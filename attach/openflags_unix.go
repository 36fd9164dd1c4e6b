//go:build unix

package attach

import "syscall"

// oNoFollow refuses a symlink at the name an attachment is saved under.
const oNoFollow = syscall.O_NOFOLLOW
