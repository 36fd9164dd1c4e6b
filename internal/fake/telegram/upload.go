package telegram

import (
	"io"
	"net/http"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/fake/arrival"
)

// Limits of the files a bot sends, as the Bot API documents them: 50 MB
// for a document, 10 MB for a photo; a caption is at most 1024
// characters.
const (
	MaxDocument = 50 << 20
	MaxPhoto    = 10 << 20
	MaxCaption  = 1024
)

// maxUpload bounds a multipart request body: the largest document and
// room for its form fields.
const maxUpload = MaxDocument + 1<<20

// Upload records a file the bot sent with sendDocument or sendPhoto.
type Upload struct {
	Method    string // "sendDocument" or "sendPhoto"
	ChatID    int64
	Thread    int // message_thread_id; 0 when none
	MessageID int
	FileName  string // the multipart part's filename
	Data      []byte
	Caption   string
	At        time.Time // when the request arrived
}

// RefuseUploads makes every later sendDocument and sendPhoto fail (or,
// with false, succeed again) as the Bot API refuses a file too large for
// it: 413 "Request Entity Too Large". Nothing is recorded.
func (s *Server) RefuseUploads(refuse bool) { s.refuse.Store(refuse) }

// Uploads returns the files the bot sent, in order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Upload(nil), s.uploads...)
}

func (s *Server) sendDocument(w http.ResponseWriter, r *http.Request, p params) {
	s.upload(w, r, p, "sendDocument", "document", MaxDocument)
}

func (s *Server) sendPhoto(w http.ResponseWriter, r *http.Request, p params) {
	s.upload(w, r, p, "sendPhoto", "photo", MaxPhoto)
}

// upload takes the file of a multipart sendDocument or sendPhoto (field),
// checks it as the Bot API does (a photo must be an image), records it
// and answers the Message.
func (s *Server) upload(w http.ResponseWriter, r *http.Request, p params, method, field string, max int64) {
	if s.refuse.Load() {
		writeError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large", 0)
		return
	}
	chat, ok := p.int64("chat_id")
	if !ok {
		badRequest("chat not found").write(w)
		return
	}
	if r.MultipartForm == nil || len(r.MultipartForm.File[field]) == 0 {
		badRequest("there is no " + field + " in the request").write(w)
		return
	}
	fh := r.MultipartForm.File[field][0]
	f, err := fh.Open()
	if err != nil {
		badRequest("file: " + err.Error()).write(w)
		return
	}
	data, err := io.ReadAll(f)
	f.Close()
	switch {
	case err != nil:
		badRequest("file: " + err.Error()).write(w)
		return
	case len(data) == 0:
		badRequest("file must be non-empty").write(w)
		return
	case int64(len(data)) > max:
		writeError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large", 0)
		return
	case method == "sendPhoto" && !isImage(data):
		badRequest("IMAGE_PROCESS_FAILED").write(w)
		return
	case utf16Len(p["caption"]) > MaxCaption:
		badRequest("message caption is too long").write(w)
		return
	}
	bot := s.Bot()
	s.mu.Lock()
	u := Upload{Method: method, ChatID: chat, Thread: p.int("message_thread_id"), MessageID: s.newMessageIDLocked(chat),
		FileName: fh.Filename, Data: data, Caption: p["caption"], At: arrival.Of(r)}
	s.uploads = append(s.uploads, u)
	res := Message{MessageID: u.MessageID, From: &bot, Chat: s.chatLocked(chat), Date: u.At.Unix(), Caption: u.Caption}
	s.mu.Unlock()
	writeResult(w, res)
}

// isImage reports data that Telegram could process as a photo: its bytes
// sniff as a JPEG, PNG, GIF or WEBP image.
func isImage(data []byte) bool {
	switch http.DetectContentType(data) {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}
