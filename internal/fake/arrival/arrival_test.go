package arrival

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestStampIsWhenTheBytesCame: a request whose bytes wait in the socket
// before the server reads them is stamped when they came (on Linux, the
// kernel's receive time: before the client's write returned), not when
// read; on other systems, when read.
func TestStampIsWhenTheBytesCame(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l = Listen(l)
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	ac := server.(*conn)

	// The first request only warms up: the kernel turns receive stamps on
	// for all sockets when the first one asks, and may do so a moment late
	// (a deferred static key), so that its first bytes have none; such
	// bytes are stamped when read.
	for i := range 4 {
		before := time.Now()
		if _, err := fmt.Fprintf(client, "request %d\n", i); err != nil {
			t.Fatal(err)
		}
		written := time.Now()
		// The bytes wait in the socket: the read starts well after.
		time.Sleep(20 * time.Millisecond)
		reading := time.Now()
		line, err := bufio.NewReader(io.LimitReader(server, 11)).ReadString('\n')
		if err != nil || line != fmt.Sprintf("request %d\n", i) {
			t.Fatalf("read %q, %v", line, err)
		}
		at := ac.arrived()
		switch {
		case at.Before(before):
			t.Errorf("request %d stamped before it was sent", i)
		case i == 0:
		case runtime.GOOS == "linux":
			if at.After(written) {
				t.Errorf("request %d stamped %v after its write ended (read %v after): want before", i, at.Sub(written), reading.Sub(written))
			}
		case at.Before(reading):
			t.Errorf("request %d stamped before it was read", i)
		}
		// The answer: the next bytes begin another request.
		if _, err := server.Write([]byte("ok\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(client, make([]byte, 3)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOfInAServer: a handler gets its request's arrival, not before the
// client began to send it and not after the handler began; each request
// on a kept-alive connection has its own.
func TestOfInAServer(t *testing.T) {
	var starts, stamps []time.Time
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		starts = append(starts, time.Now())
		stamps = append(stamps, Of(r))
	}))
	srv.Listener = Listen(srv.Listener)
	srv.Config.ConnContext = ConnContext
	srv.Start()
	defer srv.Close()

	var sent []time.Time
	for range 3 {
		sent = append(sent, time.Now())
		resp, err := http.Post(srv.URL, "text/plain", strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for i := range sent {
		if stamps[i].Before(sent[i]) || stamps[i].After(starts[i]) {
			t.Errorf("request %d: stamped %v after it was sent, handled %v after the stamp", i, stamps[i].Sub(sent[i]), starts[i].Sub(stamps[i]))
		}
	}
}

// TestOfOutsideAServer: a request that did not come through Listen is
// stamped now.
func TestOfOutsideAServer(t *testing.T) {
	before := time.Now()
	if at := Of(httptest.NewRequest(http.MethodGet, "/", nil)); at.Before(before) {
		t.Errorf("stamped %v before the call", before.Sub(at))
	}
}
