package arrival

import (
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"
)

// newConn asks the kernel to stamp what c receives (SO_TIMESTAMPNS) and
// reads it with those stamps; a connection that is not a socket, or that
// refuses, is read and stamped when read.
func newConn(c net.Conn) *conn {
	ac := &conn{Conn: c, fresh: true}
	ac.stamped = func(p []byte) (int, time.Time, error) {
		n, err := c.Read(p)
		return n, time.Time{}, err
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return ac
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return ac
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return ac
	}
	ac.stamped = func(p []byte) (int, time.Time, error) { return recvStamped(raw, p) }
	return ac
}

// recvStamped reads into p from raw with recvmsg, and returns the
// kernel's receive stamp of the bytes read, if it gave one.
func recvStamped(raw syscall.RawConn, p []byte) (int, time.Time, error) {
	if len(p) == 0 {
		return 0, time.Time{}, nil
	}
	var (
		n, oobn int
		rerr    error
		oob     [128]byte
	)
	err := raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), p, oob[:], 0)
		return rerr != syscall.EAGAIN
	})
	if err != nil {
		return 0, time.Time{}, err // a deadline, or the connection closed
	}
	if rerr != nil {
		return 0, time.Time{}, &net.OpError{Op: "read", Net: "tcp", Err: rerr}
	}
	if n == 0 {
		return 0, time.Time{}, io.EOF
	}
	return n, stampOf(oob[:oobn]), nil
}

// stampOf is the SCM_TIMESTAMPNS of a recvmsg's control messages; zero
// when there is none.
func stampOf(oob []byte) time.Time {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS &&
			len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(int64(ts.Sec), int64(ts.Nsec))
		}
	}
	return time.Time{}
}
