//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package main

import (
	"errors"
	"os"
)

// echoOff is not available here: a secret cannot be read from a terminal
// without showing it.
func echoOff(*os.File) (restore func(), err error) {
	return nil, errors.New("not supported on this system")
}
