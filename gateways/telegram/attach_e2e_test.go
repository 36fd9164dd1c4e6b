package telegram_test

// End-to-end tests of attachments: files sent on Telegram through the
// unmodified library and the fake Bot API, saved by attach, seen
// by the fake OpenAI server.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

var (
	pngBytes = gatewaytest.PNG()
	stranger = faketg.User{ID: 1003, FirstName: "Mallory", Username: "mallory"}
)

// withFile is a message from from in a private chat carrying field (photo,
// document, voice, …) as raw JSON.
func withFile(from faketg.User, caption, field, raw string) faketg.Message {
	return faketg.Message{From: &from, Chat: faketg.Chat{ID: from.ID, Type: "private"}, Caption: caption,
		Extra: map[string]json.RawMessage{field: json.RawMessage(raw)}}
}

func document(id, name string, size int) string {
	b, _ := json.Marshal(map[string]any{"file_id": id, "file_unique_id": "u" + id, "file_name": name, "mime_type": "text/plain", "file_size": size})
	return string(b)
}

// waitModel waits for the n-th request to the model and returns it.
func (e *e2e) waitModel(t *testing.T, n int) fakeoai.Request {
	t.Helper()
	return gatewaytest.WaitRequest(t, e.ai, n)
}

func TestE2EPhotoWithCaptionReachesAVisionProvider(t *testing.T) {
	e := startE2EWith(t, faketg.Options{}, func(c *config.Config) { c.LLM.Providers[0].Vision = true })
	small := e.tg.AddFile(pngBytes[:40], ".jpg")
	large := e.tg.AddFile(pngBytes, ".jpg")
	photo := fmt.Sprintf(`[{"file_id":%q,"file_unique_id":"a","width":90,"height":90,"file_size":40},
		{"file_id":%q,"file_unique_id":"b","width":800,"height":600,"file_size":%d}]`, small, large, len(pngBytes))
	e.tg.InjectMessage(withFile(guest, "what is this?", "photo", photo))
	e.waitSent(t, guest.ID, fakeoai.DefaultAnswer)
	gatewaytest.CheckImageTurn(t, e.waitModel(t, 0), "what is this?", pngBytes)
	if d := e.tg.Downloads(); len(d) != 1 || d[0].FileID != large {
		t.Errorf("downloads %+v, want the largest size only", d)
	}
}

func TestE2EDocumentLandsUnderASanitisedName(t *testing.T) {
	e := startE2E(t)
	for i, name := range gatewaytest.SanitisedNames() {
		data := gatewaytest.SanitisedData(i, name)
		id := e.tg.AddFile(data, ".txt")
		e.tg.InjectMessage(withFile(guest, "", "document", document(id, name, len(data))))
		gatewaytest.CheckSaved(t, e.workspace, e.waitModel(t, i).LastUser(), "inbox/telegram-1002", name, data)
	}
	gatewaytest.CheckNothingEscaped(t, e.workspace)
}

func TestE2EVoiceNoteIsTranscribed(t *testing.T) {
	e := startE2EWith(t, faketg.Options{}, func(c *config.Config) {
		c.LLM.Transcribe = config.Transcribe{Provider: "fake", Model: "whisper-1", Timeout: config.Duration(10 * time.Second)}
	})
	e.ai.SetTranscript("remind me to buy milk")
	voice := []byte("OggS\x00fake opus voice note")
	id := e.tg.AddFile(voice, ".oga")
	e.tg.InjectMessage(withFile(guest, "", "voice", fmt.Sprintf(`{"file_id":%q,"file_unique_id":"v","duration":2,"mime_type":"audio/ogg","file_size":%d}`, id, len(voice))))
	e.waitSent(t, guest.ID, fakeoai.DefaultAnswer)
	gatewaytest.CheckTranscribed(t, e.ai, voice, "whisper-1")
	if user := e.waitModel(t, 0).LastUser(); !strings.Contains(user, "the user's words] remind me to buy milk") {
		t.Errorf("the model saw %q", user)
	}
	var sent []string
	for _, s := range e.tg.Sent() {
		sent = append(sent, s.Plain)
	}
	gatewaytest.CheckQuotedBefore(t, sent, "remind me to buy milk", fakeoai.DefaultAnswer)
}

func TestE2EAttachmentOverMaxBytesIsNotDownloaded(t *testing.T) {
	e := startE2EWith(t, faketg.Options{}, func(c *config.Config) { c.Attachments.MaxBytes = 1000 })
	big := e.tg.AddFile(bytes.Repeat([]byte("x"), 5000), ".bin")
	e.tg.InjectMessage(withFile(guest, "", "document", document(big, "big.log", 5000)))
	e.waitSent(t, guest.ID, "the limit is 1000 bytes")
	if got := e.waitSent(t, guest.ID, "the limit is"); !strings.Contains(got.Plain, "4.9 KiB") {
		t.Errorf("the refusal does not name the size: %q", got.Plain)
	}
	if d := e.tg.Downloads(); len(d) != 0 || e.tg.Calls("getFile") != 0 {
		t.Errorf("downloads %+v, getFile %d: want none", d, e.tg.Calls("getFile"))
	}
	// A file announced small that turns out big is cut while read.
	liar := e.tg.AddFileSized(bytes.Repeat([]byte("y"), 5000), ".bin", 10)
	e.tg.InjectMessage(withFile(guest, "and this", "document", document(liar, "small.log", 10)))
	e.waitSent(t, guest.ID, "over the limit of 1000 bytes")
	e.waitSent(t, guest.ID, fakeoai.DefaultAnswer) // the caption is still handled
	entries, _ := os.ReadDir(filepath.Join(e.workspace, "inbox", "telegram-1002"))
	if len(entries) != 0 {
		t.Errorf("stored: %v", entries)
	}
}

func TestE2EStrangersAttachmentIsNeverDownloaded(t *testing.T) {
	e := startE2E(t)
	id := e.tg.AddFile([]byte("secret plans"), ".txt")
	e.tg.InjectMessage(withFile(stranger, "read this", "document", document(id, "plans.txt", 12)))
	e.tg.InjectMessage(withFile(stranger, "", "document", document(id, "plans.txt", 12)))
	unaddressed := withFile(guest, "", "document", document(id, "plans.txt", 12))
	unaddressed.Chat = team
	e.tg.InjectMessage(unaddressed)
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "marker"})
	e.waitSent(t, guest.ID, fakeoai.DefaultAnswer)
	if d := e.tg.Downloads(); len(d) != 0 || e.tg.Calls("getFile") != 0 {
		t.Errorf("downloads %+v, getFile %d: want none", d, e.tg.Calls("getFile"))
	}
	gatewaytest.CheckModelSawOnly(t, e.ai, "marker")
}

func TestE2EFileRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer other.Close()
	e := startE2E(t)
	e.tg.RedirectFiles(other.URL)
	id := e.tg.AddFile([]byte("data"), ".txt")
	e.tg.InjectMessage(withFile(guest, "keep this", "document", document(id, "a.txt", 4)))
	e.waitSent(t, guest.ID, "could not download")
	e.waitSent(t, guest.ID, fakeoai.DefaultAnswer)
	if hits.Load() != 0 {
		t.Errorf("the redirect to another host was followed %d times", hits.Load())
	}
	if strings.Contains(e.logs.String(), other.URL+"/documents") {
		t.Error("the redirect target is in the log")
	}
}
