package discord

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestRecordsAreStampedOnArrival: a message's, an edit's and a typing's
// At is when the bot's request came, as Discord counts it against its
// limits, not when the fake got to it: each request is written while the
// fake is kept busy (its lock held), and its record must not be later than
// the moment the client's write returned.
func TestRecordsAreStampedOnArrival(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("elsewhere a request is stamped when the fake reads it")
	}
	s := Start(t, Options{})
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	answers := bufio.NewReader(c)
	// send writes a request while the fake is busy, and returns when the
	// write returned.
	send := func(method, path, body string) time.Time {
		t.Helper()
		s.mu.Lock()
		_, err := fmt.Fprintf(c, "%s /api/v9%s HTTP/1.1\r\nHost: discord.com\r\nAuthorization: Bot %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", method, path, s.Token(), len(body), body)
		written := time.Now()
		s.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(answers, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %s", method, path, resp.Status)
		}
		return written
	}
	ch := s.DMChannel("80351110224678912")
	// The kernel turns its receive stamps on a moment after the first
	// socket asks (a deferred static key, later on a busy machine); until
	// then the fake stamps what it reads when it reads it. Warm up until
	// a request is stamped when it came: the stamps then stay on while the
	// connection is open. Before the fix, none ever was.
	testutil.WaitFor(t, "a typing stamped when its request came", func() bool {
		written := send(http.MethodPost, "/channels/"+ch+"/typing", "")
		typing := s.Typing()
		return !typing[len(typing)-1].At.After(written)
	})
	late := func(what string, at, written time.Time) {
		t.Helper()
		if at.After(written) {
			t.Errorf("%s stamped %v after its request's write returned: when the fake got to it, not when it came", what, at.Sub(written))
		}
	}
	written := send(http.MethodPost, "/channels/"+ch+"/messages", `{"content":"one"}`)
	msgs := s.Messages(ch)
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	late("the message", msgs[0].At, written)
	written = send(http.MethodPatch, "/channels/"+ch+"/messages/"+msgs[0].ID, `{"content":"two"}`)
	late("the edit", s.Edits()[0].At, written)
	written = send(http.MethodPost, "/channels/"+ch+"/typing", "")
	typing := s.Typing()
	late("the typing", typing[len(typing)-1].At, written)
}
