package discord

import (
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/fake/arrival"
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
	p := arrival.Dial(t, s.URL(), &s.mu, "Authorization: Bot "+s.Token())
	send := func(method, path, body string) time.Time {
		t.Helper()
		return p.Send(method, "/api/v9"+path, "application/json", body)
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
	written := send(http.MethodPost, "/channels/"+ch+"/messages", `{"content":"one"}`)
	msgs := s.Messages(ch)
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	arrival.Late(t, "the message", msgs[0].At, written)
	written = send(http.MethodPatch, "/channels/"+ch+"/messages/"+msgs[0].ID, `{"content":"two"}`)
	arrival.Late(t, "the edit", s.Edits()[0].At, written)
}
