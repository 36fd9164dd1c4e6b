//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package console

import "golang.org/x/sys/unix"

// The ioctls that read and set a terminal's mode.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
