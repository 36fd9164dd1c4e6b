package slack

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestRecordsAreStampedOnArrival: a post's, an update's and an
// ephemeral's At is when the bot's request came, as Slack counts it
// against its limits, not when the fake got to it: each request is written
// while the fake is kept busy (its lock held), and its record must not be
// later than the moment the client's write returned.
func TestRecordsAreStampedOnArrival(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("elsewhere a request is stamped when the fake reads it")
	}
	s, _ := newFake(t, Options{})
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	answers := bufio.NewReader(c)
	// call writes a Web API call while the fake is busy, and returns when
	// the write returned.
	call := func(method string, form url.Values) time.Time {
		t.Helper()
		body := form.Encode()
		s.mu.Lock()
		_, err := fmt.Fprintf(c, "POST /api/%s HTTP/1.1\r\nHost: slack.com\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", method, s.BotToken(), len(body), body)
		written := time.Now()
		s.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(answers, nil)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"ok":true`) {
			t.Fatalf("%s: %s %s", method, resp.Status, answer)
		}
		return written
	}
	// The kernel turns its receive stamps on a moment after the first
	// socket asks (a deferred static key, later on a busy machine); until
	// then the fake stamps what it reads when it reads it. Warm up until
	// a request is stamped when it came: the stamps then stay on while the
	// connection is open. Before the fix, none ever was.
	testutil.WaitFor(t, "an ephemeral stamped when its request came", func() bool {
		written := call("chat.postEphemeral", url.Values{"channel": {"C1"}, "user": {"U1"}, "text": {"psst"}})
		es := s.Ephemerals()
		return !es[len(es)-1].At.After(written)
	})
	late := func(what string, at, written time.Time) {
		t.Helper()
		if at.After(written) {
			t.Errorf("%s stamped %v after its request's write returned: when the fake got to it, not when it came", what, at.Sub(written))
		}
	}
	written := call("chat.postMessage", url.Values{"channel": {"C1"}, "text": {"one"}})
	posts := s.Posts("C1")
	if len(posts) != 1 {
		t.Fatalf("%d posts, want 1", len(posts))
	}
	late("the post", posts[0].At, written)
	written = call("chat.update", url.Values{"channel": {"C1"}, "ts": {posts[0].TS}, "text": {"two"}})
	late("the update", s.Updates()[0].At, written)
}
