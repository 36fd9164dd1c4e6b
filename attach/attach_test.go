package attach

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

func TestSafeName(t *testing.T) {
	long := strings.Repeat("é", 150) + ".txt" // 304 bytes
	for _, tc := range []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../../etc/passwd", "____etc_passwd"},
		{"..", "file"},
		{".bashrc", "bashrc"},
		{"a\nb.txt", "a_b.txt"},
		{"evil\u202Etxt.exe", "evil_txt.exe"},
		{"a/b\\c", "a_b_c"},
		{"bad\xffutf8", "bad_utf8"},
		{"", "file"},
		{" . ", "file"},
	} {
		if got := SafeName(tc.in, core.AttachDocument, ""); got != tc.want {
			t.Errorf("SafeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	got := SafeName(long, core.AttachDocument, "")
	if len(got) > MaxName || !strings.HasSuffix(got, ".txt") || !strings.HasPrefix(got, "éé") || !utf8Valid(got) {
		t.Errorf("a 304-byte name became %q (%d bytes)", got, len(got))
	}
	if got := SafeName("", core.AttachImage, "image/png"); got != "photo.png" {
		t.Errorf("an unnamed photo is %q", got)
	}
	if got := SafeName("", core.AttachVoice, ""); got != "voice.ogg" {
		t.Errorf("an unnamed voice note is %q", got)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// bytesFetcher serves data, or fails with err; it counts its calls.
type bytesFetcher struct {
	data []byte
	err  error

	mu    sync.Mutex
	calls int
}

func (f *bytesFetcher) Fetch(_ context.Context, w io.Writer, max int64) error {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	// A lying platform: the whole body, whatever max says; the writer
	// must stop it.
	_, err := io.Copy(w, bytes.NewReader(f.data))
	return err
}

type auditLog struct {
	mu sync.Mutex
	e  []record.AuditEntry
}

func (a *auditLog) AppendAudit(_ context.Context, e record.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.e = append(a.e, e)
	return nil
}

var at = time.Date(2026, 11, 26, 23, 59, 1, 0, time.UTC)

func newReceiver(t *testing.T, mod func(*Options)) (*Receiver, string, *auditLog) {
	t.Helper()
	ws := t.TempDir()
	al := &auditLog{}
	o := Options{Workspace: ws, Dir: "inbox", MaxBytes: 1000, Images: true, MaxImages: 2, Audit: al,
		Log: zerolog.Nop(), Now: func() time.Time { return at }}
	if mod != nil {
		mod(&o)
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return r, ws, al
}

func signal(atts ...core.Attachment) core.Signal {
	return core.Signal{Kind: core.KindMessage, Conv: core.Conversation{Gateway: "telegram", Chat: "-100"}, From: "telegram:1", Attachments: atts}
}

// TestDocumentIsSavedByteForByte: the file lands under <dir>/<gateway>-<chat>
// with the UTC time and its sanitised name, byte for byte; the model is
// told the path, the name as sent (escaped) and the size; the audit has
// its SHA-256.
func TestDocumentIsSavedByteForByte(t *testing.T) {
	r, ws, al := newReceiver(t, nil)
	data := []byte("root:x:0:0\n")
	got := r.Receive(context.Background(), signal(core.Attachment{Name: "../../etc/passwd", MediaType: "text/plain", Size: int64(len(data)), Kind: core.AttachDocument, Fetcher: &bytesFetcher{data: data}}))
	rel := "inbox/telegram--100/20261126T235901Z-____etc_passwd"
	b, err := os.ReadFile(filepath.Join(ws, rel))
	if err != nil || !bytes.Equal(b, data) {
		t.Fatalf("saved %q, %v; want the bytes sent", b, err)
	}
	if len(got.Notes) != 0 || !strings.Contains(got.Text, `"`+rel+`"`) || !strings.Contains(got.Text, `"../../etc/passwd"`) || !strings.Contains(got.Text, "11 bytes") {
		t.Errorf("received %+v", got)
	}
	sum := sha256.Sum256(data)
	if len(al.e) != 1 || al.e[0].Detail != "sha256:"+hex.EncodeToString(sum[:]) || al.e[0].Outcome != "received" || al.e[0].RequestedBy != "telegram:1" {
		t.Errorf("audit %+v", al.e)
	}
	// The same name again, the same second: a new file, never the old one.
	r.Receive(context.Background(), signal(core.Attachment{Name: "../../etc/passwd", Kind: core.AttachDocument, Fetcher: &bytesFetcher{data: []byte("other")}}))
	if b, _ := os.ReadFile(filepath.Join(ws, rel)); !bytes.Equal(b, data) {
		t.Errorf("the first file was overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, rel+"-2")); string(b) != "other" {
		t.Errorf("the second file: %q", b)
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "inbox/telegram--100"))
	if len(entries) != 2 {
		t.Errorf("the directory holds %d entries (temporary files left?)", len(entries))
	}
}

// TestOverMaxBytesIsNeverFetched: an announced size over the limit is
// refused with a note naming both, before any download.
func TestOverMaxBytesIsNeverFetched(t *testing.T) {
	r, ws, al := newReceiver(t, nil)
	f := &bytesFetcher{data: make([]byte, 5000)}
	got := r.Receive(context.Background(), signal(core.Attachment{Name: "big.bin", Size: 5000, Kind: core.AttachDocument, Fetcher: f}))
	if f.calls != 0 {
		t.Fatalf("fetched %d times", f.calls)
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "4.9 KiB") || !strings.Contains(got.Notes[0], "1000 bytes") || got.Text != "" {
		t.Errorf("received %+v", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "inbox")); !errors.Is(err, os.ErrNotExist) || len(al.e) != 0 {
		t.Errorf("something was stored: %v, audit %d", err, len(al.e))
	}
}

// TestLongerThanAnnouncedIsCut: a file that turns out longer than the
// limit while read is discarded, nothing left behind.
func TestLongerThanAnnouncedIsCut(t *testing.T) {
	r, ws, _ := newReceiver(t, nil)
	got := r.Receive(context.Background(), signal(core.Attachment{Name: "small.bin", Size: 10, Kind: core.AttachDocument, Fetcher: &bytesFetcher{data: make([]byte, 1001)}}))
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "over the limit") || got.Text != "" {
		t.Errorf("received %+v", got)
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "inbox/telegram--100"))
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestFailedDownloadIsReported: the user is told, nothing is stored.
func TestFailedDownloadIsReported(t *testing.T) {
	r, ws, _ := newReceiver(t, nil)
	got := r.Receive(context.Background(), signal(core.Attachment{Name: "a.txt", Kind: core.AttachDocument, Fetcher: &bytesFetcher{err: errors.New("telegram: fetch: 500")}}))
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "could not download “a.txt”") || strings.Contains(got.Notes[0], "500") {
		t.Errorf("received %+v", got)
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "inbox/telegram--100"))
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestImagesAreSniffed: a PNG named .txt is an image, a text named .png
// is not; at most MaxImages go to the model; none without Images.
func TestImagesAreSniffed(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR rest")
	r, _, _ := newReceiver(t, nil)
	got := r.Receive(context.Background(), signal(
		core.Attachment{Name: "notes.txt", Kind: core.AttachDocument, Fetcher: &bytesFetcher{data: png}},
		core.Attachment{Name: "fake.png", Kind: core.AttachImage, Fetcher: &bytesFetcher{data: []byte("just text")}},
		core.Attachment{Kind: core.AttachImage, Fetcher: &bytesFetcher{data: png}},
		core.Attachment{Kind: core.AttachImage, Fetcher: &bytesFetcher{data: png}},
	))
	if len(got.Images) != 2 || got.Images[0].MediaType != "image/png" || !bytes.Equal(got.Images[0].Data, png) {
		t.Fatalf("images %+v, want two PNGs", got.Images)
	}
	if strings.Count(got.Text, "received: saved at") != 4 || strings.Count(got.Text, "sent without a name") != 2 {
		t.Errorf("text %q", got.Text)
	}
	r, _, _ = newReceiver(t, func(o *Options) { o.Images = false })
	if got := r.Receive(context.Background(), signal(core.Attachment{Kind: core.AttachImage, Fetcher: &bytesFetcher{data: png}})); len(got.Images) != 0 {
		t.Errorf("without vision: %d images", len(got.Images))
	}
}

// TestSymlinkedInboxIsRefused: an inbox that is a link out of the
// workspace is not written through.
func TestSymlinkedInboxIsRefused(t *testing.T) {
	r, ws, _ := newReceiver(t, nil)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "inbox")); err != nil {
		t.Fatal(err)
	}
	got := r.Receive(context.Background(), signal(core.Attachment{Name: "a.txt", Kind: core.AttachDocument, Fetcher: &bytesFetcher{data: []byte("x")}}))
	if len(got.Notes) != 1 || got.Text != "" {
		t.Errorf("received %+v", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the workspace: %v", entries)
	}
}

// TestVoiceIsTranscribed: a voice note goes to /audio/transcriptions byte
// for byte; the transcript is the user's words to the model and quoted to
// the user; a failure is reported and the file stays saved.
func TestVoiceIsTranscribed(t *testing.T) {
	f := fakeoai.Start(t)
	f.SetTranscript("turn off the lights\nplease")
	p, err := llm.NewOpenAI(llm.OpenAIConfig{Name: "oa", BaseURL: f.URL(), APIKey: "sk-test-123", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	now := at
	r, ws, _ := newReceiver(t, func(o *Options) {
		o.Transcriber = p.Transcriber("whisper-1")
		o.Now = func() time.Time { now = now.Add(time.Second); return now }
	})
	voice := []byte("OggS voice bytes")
	got := r.Receive(context.Background(), signal(core.Attachment{MediaType: "audio/ogg", Kind: core.AttachVoice, Fetcher: &bytesFetcher{data: voice}}))
	tr := f.Transcriptions()
	if len(tr) != 1 || !bytes.Equal(tr[0].Data, voice) || tr[0].Model != "whisper-1" || tr[0].FileName != "voice.ogg" {
		t.Fatalf("transcriptions %+v", tr)
	}
	if !strings.Contains(got.Text, "[transcript of the voice above, the user's words] turn off the lights\nplease") {
		t.Errorf("text %q", got.Text)
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "> turn off the lights\n> please") {
		t.Errorf("notes %q", got.Notes)
	}
	f.FailTranscriptions(http.StatusInternalServerError)
	got = r.Receive(context.Background(), signal(core.Attachment{MediaType: "audio/ogg", Kind: core.AttachVoice, Fetcher: &bytesFetcher{data: voice}}))
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "could not transcribe") || strings.Contains(got.Text, "transcript") {
		t.Errorf("after a failure: %+v", got)
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "inbox/telegram--100"))
	if len(entries) != 2 {
		t.Errorf("saved %d files, want both", len(entries))
	}
}
