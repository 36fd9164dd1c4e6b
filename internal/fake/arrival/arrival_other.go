//go:build !linux

package arrival

import (
	"net"
	"time"
)

// newConn reads c and stamps what it reads when read.
func newConn(c net.Conn) *conn {
	ac := &conn{Conn: c, fresh: true}
	ac.stamped = func(p []byte) (int, time.Time, error) {
		n, err := c.Read(p)
		return n, time.Time{}, err
	}
	return ac
}
