//go:build !unix

package sqlite

import (
	"errors"
	"os"
)

// errWouldBlock is never returned where flock does not exist.
var errWouldBlock = errors.New("sqlite: lock held")

// flock is a no-op where the system has no flock: gatehouse targets Unix,
// and this keeps the package building elsewhere (without the one-instance
// guarantee).
func flock(*os.File) error { return nil }
