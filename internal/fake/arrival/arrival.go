// Package arrival stamps each request a fake platform server receives
// with when it arrived: what a platform counts against its rate limits.
//
// A handler's own clock is late by however long the fake's process took
// to get to it: a test process under -race, serving a model's and a
// platform's fakes and a burst of bots' requests on two cores, reads a
// request a tenth of a second or more after it came (measured in the
// two-instance pacing test in cmd/bot: the bots wrote their requests in
// time, the fake stamped a burst's first ones up to 180 ms late, and counted
// 31 in one second that had come over more than one). On Linux the stamp
// is the kernel's receive time of the request's first bytes
// (SO_TIMESTAMPNS), which no scheduling of the fake delays; elsewhere it is
// when the fake first read them.
//
// Serve a fake with Listen's listener and ConnContext in its http.Server;
// a handler reads the stamp with Of.
package arrival

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Listen returns l, its connections stamping the arrival of each request
// they carry (Of).
func Listen(l net.Listener) net.Listener { return listener{l} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newConn(c), nil
}

// conn is an accepted connection: the next bytes read after a response was
// written (or the first ever) begin a request, and their arrival is its.
// It exposes only net.Conn's methods, so that every byte of a response
// goes through Write (no ReadFrom past it).
type conn struct {
	net.Conn
	stamped stamper

	mu    sync.Mutex
	fresh bool      // the next bytes read begin a request
	at    time.Time // when the current request's first bytes arrived
}

// stamper reads into p and says when the bytes read arrived (zero: not
// known).
type stamper func(p []byte) (int, time.Time, error)

func (c *conn) Read(p []byte) (int, error) {
	n, at, err := c.stamped(p)
	if n > 0 {
		if at.IsZero() {
			at = time.Now()
		}
		c.mu.Lock()
		if c.fresh {
			c.at, c.fresh = at, false
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *conn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	c.fresh = true
	c.mu.Unlock()
	return n, err
}

// arrived is when the current request's first bytes arrived.
func (c *conn) arrived() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

// connKey is the context key of a request's connection.
type connKey struct{}

// ConnContext is an http.Server's ConnContext: it keeps the connection
// for Of.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if ac, ok := c.(*conn); ok {
		return context.WithValue(ctx, connKey{}, ac)
	}
	return ctx
}

// Of is when r arrived: its first bytes, on a connection of Listen's in a
// server with ConnContext; now otherwise.
func Of(r *http.Request) time.Time {
	if c, ok := r.Context().Value(connKey{}).(*conn); ok {
		if at := c.arrived(); !at.IsZero() {
			return at
		}
	}
	return time.Now()
}
