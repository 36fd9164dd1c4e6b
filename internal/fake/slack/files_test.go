package slack

import (
	"io"
	"net/http"
	"testing"

	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// TestFileShareServedWithTheBearerOnly: a message sharing a file arrives
// as a file_share message event whose files slack-go decodes; its
// url_private_download serves the bytes to the bot token as a bearer and
// answers 401 without it; each request is recorded.
func TestFileShareServedWithTheBearerOnly(t *testing.T) {
	s := New(Options{})
	t.Cleanup(s.Close)
	c := runClient(t, s)
	c.next(t, socketmode.EventTypeHello)
	s.InjectMessage(Event{Channel: "D1", User: "U1", Text: "see", Files: []File{{Name: "../a b.txt", Mimetype: "text/plain", Data: []byte("hello")}}})
	_, inner := c.nextInner(t)
	m, ok := inner.(*slackevents.MessageEvent)
	if !ok || m.SubType != "file_share" || m.Message == nil || len(m.Message.Files) != 1 || m.Text != "see" {
		t.Fatalf("event %T %+v", inner, inner)
	}
	f := m.Message.Files[0]
	if f.Name != "../a b.txt" || f.Size != 5 || f.Mimetype != "text/plain" || f.URLPrivateDownload != s.URL()+"/files-pri/T0FAKE-"+f.ID+"/download/.._a_b.txt" {
		t.Fatalf("file %+v", f)
	}
	get := func(auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, f.URLPrivateDownload, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("Bearer " + s.BotToken()); code != 200 || body != "hello" {
		t.Errorf("with the token: %d %q", code, body)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("without a token: %d", code)
	}
	if code, _ := get("Bearer xoxb-wrong"); code != http.StatusUnauthorized {
		t.Errorf("with a wrong token: %d", code)
	}
	d := s.FileDownloads()
	if len(d) != 3 || !d[0].Served || d[1].Served || d[1].Authorization != "" || d[2].Served || d[0].FileID != f.ID {
		t.Errorf("downloads %+v", d)
	}
}
