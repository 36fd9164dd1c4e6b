//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package console

import (
	"errors"
	"os"
)

// enterKeyMode is not available here: the terminal keeps its own line
// editing.
func enterKeyMode(*os.File) (leave func(), err error) {
	return nil, errors.New("console: reading key by key is not supported on this system")
}
