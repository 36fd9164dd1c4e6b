package discord

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestAttachmentsAreServedAtTheirSignedURL: an injected message's
// attachment arrives with a signed CDN URL that serves its bytes without
// a token; the URL without its signature, or a made-up one, is refused;
// every request is recorded with its Authorization header.
func TestAttachmentsAreServedAtTheirSignedURL(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	var got *events[*discordgo.MessageCreate]
	open(t, s, func(dg *discordgo.Session) { got = collect[*discordgo.MessageCreate](dg) })
	s.InjectMessage(Message{ChannelID: dmCh, Author: ann, Attachments: []Attachment{{Filename: "../a b.txt", ContentType: "text/plain", Data: []byte("hello")}}})
	testutil.WaitFor(t, "the message", func() bool { return got.len() == 1 })
	a := got.all()[0].Attachments[0]
	if a.Filename != "../a b.txt" || a.Size != 5 || a.ContentType != "text/plain" || !strings.Contains(a.URL, "/attachments/"+dmCh+"/"+a.ID+"/.._a_b.txt?") {
		t.Fatalf("attachment %+v", a)
	}
	get := func(u string, auth bool) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if auth {
			req.Header.Set("Authorization", "Bot "+s.Token())
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(a.URL, false); code != 200 || body != "hello" {
		t.Errorf("signed URL: %d %q", code, body)
	}
	unsigned, _, _ := strings.Cut(a.URL, "?")
	if code, _ := get(unsigned, false); code != http.StatusNotFound {
		t.Errorf("unsigned URL: %d", code)
	}
	get(a.URL, true)
	d := s.Downloads()
	if len(d) != 3 || !d[0].Served || d[1].Served || d[2].Authorization != "Bot "+s.Token() || d[0].AttachmentID != a.ID {
		t.Errorf("downloads %+v", d)
	}
}
