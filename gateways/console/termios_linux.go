package console

import "golang.org/x/sys/unix"

// The ioctls that read and set a terminal's mode.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
