//go:build unix

package sqlite

import (
	"os"
	"syscall"
)

// errWouldBlock is what flock returns when another process holds the lock.
var errWouldBlock = syscall.EWOULDBLOCK

// flock takes an exclusive, non-blocking flock on f. Locks belong to the
// open file description, so a second open of the same file in this process
// is refused too.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}
