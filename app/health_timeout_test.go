package app

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/metrics"
)

// pipeListener is a net.Listener whose connections are in-memory pipes,
// so a server runs inside a synctest bubble on its fake clock.
type pipeListener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// dial returns the client end of a new connection the server accepts.
func (l *pipeListener) dial(t *testing.T) net.Conn {
	t.Helper()
	client, server := net.Pipe()
	select {
	case l.conns <- server:
	case <-l.done:
		t.Fatal("listener closed")
	}
	return client
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9090} }

// TestHealthServerDropsSlowAndIdleConnections: a client that stops in the
// middle of a request body (slowloris on a webhook route or POST
// /-/reload) and a keep-alive connection left idle after its request are
// both closed by the server in bounded time; neither holds a goroutine
// and a file descriptor for as long as the peer likes.
func TestHealthServerDropsSlowAndIdleConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHealth(metrics.New(), &pingStore{}, []route{{pattern: "POST /hook", handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				http.Error(w, "bad body", http.StatusBadRequest)
				return
			}
		})}}, nil)
		ctx, cancel := context.WithCancel(t.Context())
		ln := newPipeListener()
		served := make(chan error, 1)
		go func() { served <- h.serve(ctx, ln, zerolog.Nop()) }()

		// An idle keep-alive connection after one request.
		idle := ln.dial(t)
		if _, err := idle.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(idle)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()

		// A request whose body never comes.
		slow := ln.dial(t)
		if _, err := slow.Write([]byte("POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc")); err != nil {
			t.Fatal(err)
		}

		// Far longer than any timeout the server should have; the bubble's
		// clock only moves once everything is blocked.
		const patience = time.Hour
		for name, c := range map[string]net.Conn{"idle keep-alive connection": idle, "request with a stalled body": slow} {
			c.SetReadDeadline(time.Now().Add(patience))
			buf := make([]byte, 4096)
			var err error
			for err == nil {
				_, err = c.Read(buf)
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("%s: still open after %v", name, patience)
			}
			c.Close()
		}
		cancel()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
	})
}
