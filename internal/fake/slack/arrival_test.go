package slack

import (
	"net/http"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/fake/arrival"
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
	p := arrival.Dial(t, s.URL(), &s.mu, "Authorization: Bearer "+s.BotToken())
	call := func(method string, form url.Values) time.Time {
		t.Helper()
		return p.Send(http.MethodPost, "/api/"+method, "application/x-www-form-urlencoded", form.Encode())
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
	written := call("chat.postMessage", url.Values{"channel": {"C1"}, "text": {"one"}})
	posts := s.Posts("C1")
	if len(posts) != 1 {
		t.Fatalf("%d posts, want 1", len(posts))
	}
	arrival.Late(t, "the post", posts[0].At, written)
	written = call("chat.update", url.Values{"channel": {"C1"}, "ts": {posts[0].TS}, "text": {"two"}})
	arrival.Late(t, "the update", s.Updates()[0].At, written)
}
