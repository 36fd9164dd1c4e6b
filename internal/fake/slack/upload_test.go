package slack

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The upload flow's unhappy paths: a zero length, a completion before the
// bytes, bytes of another length than announced; then the happy one,
// recorded with its channel and thread.
func TestUploadFlow(t *testing.T) {
	s, _ := newFake(t, Options{})
	form := "application/x-www-form-urlencoded"
	if got := post(t, s, "files.getUploadURLExternal", form, "filename=a.txt&length=0", s.BotToken()); got["error"] != "invalid_arguments" {
		t.Fatalf("length 0: %v", got)
	}
	got := post(t, s, "files.getUploadURLExternal", form, "filename=a.txt&length=5", s.BotToken())
	id, _ := got["file_id"].(string)
	uploadURL, _ := got["upload_url"].(string)
	if got["ok"] != true || id == "" || !strings.HasPrefix(uploadURL, s.URL()) {
		t.Fatalf("getUploadURLExternal: %v", got)
	}
	complete := url.Values{"files": {`[{"id":"` + id + `","title":"a"}]`}, "channel_id": {"C1"}, "thread_ts": {"1.000002"}}.Encode()
	if got := post(t, s, "files.completeUploadExternal", form, complete, s.BotToken()); got["error"] != "file_not_found" {
		t.Fatalf("completed before the upload: %v", got)
	}
	for _, c := range []struct {
		body string
		want int
	}{{"toolong", http.StatusBadRequest}, {"hello", http.StatusOK}} {
		body, want := c.body, c.want
		resp, err := http.Post(uploadURL, "application/octet-stream", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("upload of %q: %d, want %d", body, resp.StatusCode, want)
		}
	}
	if got := post(t, s, "files.completeUploadExternal", form, complete, s.BotToken()); got["ok"] != true {
		t.Fatalf("completeUploadExternal: %v", got)
	}
	f := s.SharedFiles()
	if len(f) != 1 || string(f[0].Data) != "hello" || f[0].Channel != "C1" || f[0].ThreadTS != "1.000002" || f[0].Name != "a.txt" {
		t.Fatalf("shared %+v", f)
	}
}
