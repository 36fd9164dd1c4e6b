package gatewaytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
)

// The helpers below are the attachment end-to-end tests' checks, the
// same whichever gateway the file is sent through: what attach
// saved in the workspace and what the model was told about it.

// savedAt finds the workspace path the model is told a file was saved at.
var savedAt = regexp.MustCompile(`saved at "([^"]+)"`)

// savedPrefix is the time prefix attach puts before a saved
// file's name.
const savedPrefix = "20060102T150405Z-"

// PNG returns a fresh copy of the image the attachment tests send: a PNG
// signature and header start, then 300 bytes.
func PNG() []byte {
	return append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 300)...)
}

// SanitisedNames returns the hostile file names a user sends to see that
// each lands under a sanitised name: a path that climbs out of the
// workspace, a name with a newline, and a 300-byte name ending in ".txt".
func SanitisedNames() []string {
	return []string{"../../etc/passwd", "evil\nname.txt", strings.Repeat("n", 296) + ".txt"}
}

// SanitisedData returns the bytes sent as the i-th file of SanitisedNames,
// named name: different for each file.
func SanitisedData(i int, name string) []byte {
	return []byte(fmt.Sprintf("content %d of %q\n", i, name))
}

// WaitRequest waits for the n-th request (from 0) to the model and
// returns it.
func WaitRequest(t testing.TB, ai *fakeoai.Server, n int) fakeoai.Request {
	t.Helper()
	WaitFirst(t, fmt.Sprintf("model request %d", n), ai.Requests, func(fakeoai.Request) bool { return len(ai.Requests()) > n })
	return ai.Requests()[n]
}

// CheckSaved fails t unless the file sent as name with data was saved
// under a sanitised name, as userMsg (the model's user message) tells:
// the path after `saved at` is in wantDir (relative to workspace, e.g.
// "inbox/<gateway>-<chat>"); its base name has no leading dot, no newline
// or separator, no "..", and at most the time prefix and 100 bytes; a
// name over 100 bytes keeps its extension; the file holds exactly data;
// and userMsg names the file as sent, JSON-escaped. It returns the path
// relative to workspace.
func CheckSaved(t testing.TB, workspace, userMsg, wantDir, name string, data []byte) string {
	t.Helper()
	m := savedAt.FindStringSubmatch(userMsg)
	if m == nil {
		t.Fatalf("%q: the model was not told a path: %q", name, userMsg)
	}
	rel := m[1]
	base := filepath.Base(rel)
	if filepath.Dir(rel) != wantDir || strings.HasPrefix(base, ".") || strings.ContainsAny(base, "\n/\\") ||
		strings.Contains(base, "..") || len(base) > len(savedPrefix)+100 {
		t.Errorf("%q saved as %q", name, rel)
	}
	if len(name) > 100 && !strings.HasSuffix(base, filepath.Ext(name)) {
		t.Errorf("the long name lost its extension: %q", base)
	}
	got, err := os.ReadFile(filepath.Join(workspace, rel))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("%q: saved %q, %v; want the bytes sent", name, got, err)
	}
	if q, _ := json.Marshal(name); !strings.Contains(userMsg, strings.ReplaceAll(string(q), `\u0026`, "&")) {
		t.Errorf("the model was not told the name as sent, escaped: %q", userMsg)
	}
	return rel
}

// CheckNothingEscaped fails t if a file SanitisedNames' climbing path
// names was written outside workspace.
func CheckNothingEscaped(t testing.TB, workspace string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(workspace, "..", "etc", "passwd")); err == nil {
		t.Error("a file escaped the workspace")
	}
}

// CheckModelSawOnly fails t unless the model got exactly one request and
// its last user message is text: what a test sends after files that must
// never reach the model.
func CheckModelSawOnly(t testing.TB, ai *fakeoai.Server, text string) {
	t.Helper()
	if reqs := ai.Requests(); len(reqs) != 1 || reqs[0].LastUser() != text {
		t.Errorf("the model saw %+v", reqs)
	}
}

// OtherHost is a loopback HTTP server standing for a host a gateway must
// never fetch a file from: it answers "data" to every request and counts
// them, and those that carry an Authorization header.
type OtherHost struct {
	// URL is the server's base URL.
	URL            string
	hits, withAuth atomic.Int32
}

// StartOtherHost starts an OtherHost, closed when the test ends.
func StartOtherHost(t testing.TB) *OtherHost {
	t.Helper()
	h := &OtherHost{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hits.Add(1)
		if r.Header.Get("Authorization") != "" {
			h.withAuth.Add(1)
		}
		_, _ = w.Write([]byte("data"))
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// CheckNotAsked fails t if h got any request, with or without
// Authorization.
func (h *OtherHost) CheckNotAsked(t testing.TB) {
	t.Helper()
	if h.hits.Load() != 0 || h.withAuth.Load() != 0 {
		t.Errorf("the other host was asked %d times (%d with Authorization)", h.hits.Load(), h.withAuth.Load())
	}
}

// CheckTranscribed stops t unless the fake got exactly one transcription
// request, of audio with model.
func CheckTranscribed(t testing.TB, ai *fakeoai.Server, audio []byte, model string) {
	t.Helper()
	if tr := ai.Transcriptions(); len(tr) != 1 || !bytes.Equal(tr[0].Data, audio) || tr[0].Model != model {
		t.Fatalf("transcriptions %+v", tr)
	}
}

// CheckQuotedBefore fails t unless one of sent (the texts the bot sent
// in a chat, in order) holds quote, and the first that does comes no
// later than the last that holds answer: a transcript is quoted to the
// user before the answer.
func CheckQuotedBefore(t testing.TB, sent []string, quote, answer string) {
	t.Helper()
	quoted, answered := -1, -1
	for i, s := range sent {
		if strings.Contains(s, quote) && quoted < 0 {
			quoted = i
		}
		if strings.Contains(s, answer) {
			answered = i
		}
	}
	if quoted < 0 || quoted > answered {
		t.Errorf("the transcript was not quoted before the answer: %q", sent)
	}
}

// CheckImageTurn fails t unless the last message of req (the model's
// request for a turn with an image and text) starts with text and says
// "image received", and stops t unless it carries exactly one image part:
// a PNG of exactly png's bytes.
func CheckImageTurn(t testing.TB, req fakeoai.Request, text string, png []byte) {
	t.Helper()
	user := req.Messages[len(req.Messages)-1]
	if !strings.HasPrefix(user.Content, text) || !strings.Contains(user.Content, "image received") {
		t.Errorf("the model saw %q", user.Content)
	}
	if len(user.Images) != 1 || user.Images[0].MediaType != "image/png" || !bytes.Equal(user.Images[0].Data, png) {
		t.Fatalf("image parts %+v, want exactly the bytes sent", user.Images)
	}
}
