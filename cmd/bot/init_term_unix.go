//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// echoOff stops the terminal f from echoing what is typed (lines are still
// edited by the terminal) until restore, which puts its mode back.
func echoOff(f *os.File) (restore func(), err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, fmt.Errorf("read the terminal's mode: %w", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return nil, fmt.Errorf("set the terminal's mode: %w", err)
	}
	return func() {
		unix.IoctlSetTermios(fd, ioctlSetTermios, old) //nolint:errcheck // nothing better to do with a terminal that is gone
	}, nil
}
