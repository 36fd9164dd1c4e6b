package arrival

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
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

	// exchange sends a request whose bytes wait in the socket (the read
	// starts well after), reads it, answers it (the next bytes begin
	// another request) and says when it was sent, written and read, and
	// what it was stamped.
	exchange := func() (before, written, reading, at time.Time) {
		before = time.Now()
		if _, err := io.WriteString(client, "request\n"); err != nil {
			t.Fatal(err)
		}
		written = time.Now()
		time.Sleep(20 * time.Millisecond)
		reading = time.Now()
		if line, err := bufio.NewReader(io.LimitReader(server, 8)).ReadString('\n'); err != nil || line != "request\n" {
			t.Fatalf("read %q, %v", line, err)
		}
		at = ac.arrived()
		if at.Before(before) {
			t.Errorf("a request stamped %v before it was sent", before.Sub(at))
		}
		if _, err := server.Write([]byte("ok\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(client, make([]byte, 3)); err != nil {
			t.Fatal(err)
		}
		return before, written, reading, at
	}
	if runtime.GOOS == "linux" {
		// The kernel turns its receive stamps on a moment after the first
		// socket asks (a deferred static key, later on a busy machine);
		// until then what is read is stamped when read. Warm up until a
		// request is stamped when it came (stamped on read, none ever is).
		testutil.WaitFor(t, "a request stamped when it came", func() bool {
			_, written, _, at := exchange()
			return !at.After(written)
		})
	}
	for i := range 3 {
		_, written, reading, at := exchange()
		switch {
		case runtime.GOOS == "linux" && at.After(written):
			t.Errorf("request %d stamped %v after its write ended (read %v after): want before", i, at.Sub(written), reading.Sub(written))
		case runtime.GOOS != "linux" && at.Before(reading):
			t.Errorf("request %d stamped before it was read", i)
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
