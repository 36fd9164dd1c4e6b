package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// errLineTooLong ends a stdio session whose server wrote a line (one
// message) over MaxJSONBody.
var errLineTooLong = fmt.Errorf("the server wrote a message over the %d MiB an MCP answer may hold", MaxJSONBody>>20)

// errServerExited ends a stdio session whose server closed its output.
var errServerExited = errors.New("the server closed its output (it exited)")

// stdioTransport speaks newline-delimited JSON-RPC to a child's stdin and
// stdout (the spec's stdio transport).
type stdioTransport struct {
	cmd    *exec.Cmd // nil: plain pipes (tests)
	w      io.WriteCloser
	r      io.ReadCloser
	wmu    sync.Mutex
	exited chan struct{} // closed once cmd.Wait returned
}

// startStdio starts cmd with pipes for its stdin and stdout and reads its
// messages into c until it closes its output; c ends then.
func startStdio(c *conn, cmd *exec.Cmd) (*stdioTransport, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	t := &stdioTransport{cmd: cmd, w: inW, r: outR, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(t.exited)
		// What it wrote before it exited is still read; a grandchild
		// holding its stdout does not hold the session.
		_ = outR.SetReadDeadline(time.Now().Add(terminateGrace))
	}()
	c.t = t
	go t.read(c)
	return t, nil
}

// pipeStdio is a stdioTransport over plain pipes, for tests.
func pipeStdio(c *conn, r io.ReadCloser, w io.WriteCloser) *stdioTransport {
	t := &stdioTransport{w: w, r: r, exited: make(chan struct{})}
	close(t.exited)
	c.t = t
	go t.read(c)
	return t
}

// read hands each line the server writes to c, and ends c when the
// server's output ends.
func (t *stdioTransport) read(c *conn) {
	err := readLines(t.r, MaxJSONBody, func(line []byte) { c.deliver(line, 0) })
	t.r.Close()
	if err == nil {
		err = errServerExited
	}
	c.end(err)
}

// readLines calls fn with each line of r (without its "\n" or "\r\n"),
// each at most max bytes, until r ends (nil) or fails.
func readLines(r io.Reader, max int, fn func([]byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, max+2)), max+2)
	for sc.Scan() {
		if len(sc.Bytes()) > max {
			return errLineTooLong
		}
		fn(sc.Bytes())
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return errLineTooLong
	} else if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("reading the server's output: %w", err)
	}
	return nil
}

// send writes msg and its newline; ctx ending stops a write the child
// does not read.
func (t *stdioTransport) send(ctx context.Context, msg []byte, _ int64) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if f, ok := t.w.(*os.File); ok {
		stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Now()) })
		defer func() {
			if !stop() {
				_ = f.SetWriteDeadline(time.Time{})
			}
		}()
	}
	if _, err := t.w.Write(append(msg, '\n')); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("writing to the server: %w", err)
	}
	return nil
}

// close closes the child's input, then sends it SIGTERM after
// terminateGrace and SIGKILL after another, and waits for it to exit.
// It does not wait for wmu: a write to a child that does not read its
// input would hold it until the write's context ended; the close ends
// that write.
func (t *stdioTransport) close() error {
	err := t.w.Close()
	if t.cmd == nil {
		t.r.Close()
		return err
	}
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Kill} {
		select {
		case <-t.exited:
			return nil
		case <-time.After(terminateGrace):
			_ = t.cmd.Process.Signal(sig)
		}
	}
	<-t.exited
	return nil
}
