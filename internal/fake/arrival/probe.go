package arrival

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Probe is a test's HTTP/1.1 connection to a fake served through Listen,
// for checking that the fake's records carry the arrival of its requests:
// Send writes each request while the fake is kept busy.
type Probe struct {
	tb      testing.TB
	c       net.Conn
	answers *bufio.Reader
	busy    sync.Locker
	header  string
}

// Dial connects to the fake at url ("http://host:port"); busy, held while
// a request is written, keeps the fake from handling it (the fake's own
// lock); header is added to every request (e.g. "Authorization: Bot x").
// The connection closes when tb's test ends.
func Dial(tb testing.TB, url string, busy sync.Locker, header string) *Probe {
	tb.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return &Probe{tb: tb, c: c, answers: bufio.NewReader(c), busy: busy, header: header}
}

// Send writes a request while the fake is busy, reads its answer (failing
// the test unless it is a 2xx) and returns when the write returned: the
// fake cannot have handled the request before then.
func (p *Probe) Send(method, path, contentType, body string) time.Time {
	p.tb.Helper()
	p.busy.Lock()
	_, err := fmt.Fprintf(p.c, "%s %s HTTP/1.1\r\nHost: fake\r\n%s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
		method, path, p.header, contentType, len(body), body)
	written := time.Now()
	p.busy.Unlock()
	if err != nil {
		p.tb.Fatal(err)
	}
	resp, err := http.ReadResponse(p.answers, nil)
	if err != nil {
		p.tb.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		p.tb.Fatalf("%s %s: %s %s", method, path, resp.Status, answer)
	}
	return written
}

// Late fails tb when at, what a record says its request arrived, is after
// written, when the request's write returned.
func Late(tb testing.TB, what string, at, written time.Time) {
	tb.Helper()
	if at.After(written) {
		tb.Errorf("%s stamped %v after its request's write returned: when the fake got to it, not when it came", what, at.Sub(written))
	}
}
