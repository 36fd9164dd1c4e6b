package slack

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/fake/arrival"
)

// The external upload flow, as the Web API documents it:
// files.getUploadURLExternal (filename, length) answers an upload_url
// and a file_id; the bytes are POSTed to the upload_url (raw, or as the
// "file" part of a multipart form); files.completeUploadExternal (files:
// a JSON array of {id, title}, channel_id, thread_ts, initial_comment)
// shares the uploaded files. The fake serves its upload URLs itself,
// under uploadPath; FailNext(UploadMethod, …) makes a POST to one fail.

// uploadPath is where the fake's upload URLs live.
const uploadPath = "/upload/v1/"

// UploadMethod is the name FailNext and Calls know a POST to an upload
// URL by.
const UploadMethod = "upload_url"

// MaxUploadBytes bounds the bytes POSTed to one upload URL (Slack takes
// up to 1 GB; the fake keeps them in memory).
const MaxUploadBytes = 64 << 20

// SharedFile is a file the bot uploaded and shared with
// files.completeUploadExternal.
type SharedFile struct {
	ID             string
	Name           string // filename given to files.getUploadURLExternal
	Title          string
	Data           []byte
	Channel        string // channel_id
	ThreadTS       string // thread_ts; empty outside a thread
	InitialComment string
	At             time.Time // when the completing request arrived
}

// uploadState is the fake's side of the upload flow.
type uploadState struct {
	pending map[string]*pendingUpload // file id → the upload
	shared  []SharedFile
}

// pendingUpload is an upload URL handed out and what was POSTed to it.
type pendingUpload struct {
	name     string
	length   int
	data     []byte
	uploaded bool
}

// SharedFiles returns the files the bot shared, in order.
func (s *Server) SharedFiles() []SharedFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SharedFile(nil), s.uploads.shared...)
}

// RefuseUploads makes every later files.getUploadURLExternal fail (or,
// with false, succeed again) as Slack refuses a file too large:
// {"ok":false,"error":"file_too_large"}. Nothing is recorded.
func (s *Server) RefuseUploads(refuse bool) { s.refuse.Store(refuse) }

func (s *Server) getUploadURLExternal(w http.ResponseWriter, _ *http.Request, p params) {
	length, err := strconv.Atoi(p["length"])
	switch {
	case strings.TrimSpace(p["filename"]) == "":
		writeError(w, "invalid_arguments")
		return
	case err != nil || length <= 0:
		writeError(w, "invalid_arguments")
		return
	case length > MaxUploadBytes || s.refuse.Load():
		writeError(w, "file_too_large")
		return
	}
	s.mu.Lock()
	if s.uploads.pending == nil {
		s.uploads.pending = map[string]*pendingUpload{}
	}
	id := fmt.Sprintf("F%08d", s.nextLocked())
	s.uploads.pending[id] = &pendingUpload{name: p["filename"], length: length}
	s.mu.Unlock()
	writeOK(w, map[string]any{"upload_url": s.URL() + uploadPath + id, "file_id": id})
}

// serveUpload takes the bytes POSTed to an upload URL.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	s.calls[UploadMethod]++
	if until, ok := s.penalty[UploadMethod]; ok && time.Now().Before(until) {
		s.early++
	}
	up := s.uploads.pending[id]
	s.mu.Unlock()
	if up == nil {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	if s.injectFault(w, r, UploadMethod, UploadMethod) {
		return
	}
	data, err := readUpload(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(data) != up.length {
		http.Error(w, fmt.Sprintf("%d bytes, announced %d", len(data), up.length), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	up.data, up.uploaded = data, true
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	_, _ = fmt.Fprintf(w, "OK - %d", len(data))
}

// readUpload reads an upload's bytes: the "file" part of a multipart
// form, or the raw body.
func readUpload(r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(nil, r.Body, MaxUploadBytes+1<<20)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return io.ReadAll(body)
	}
	r.Body = body
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		return nil, fmt.Errorf("multipart: %w", err)
	}
	fhs := r.MultipartForm.File["file"]
	if len(fhs) == 0 {
		return nil, fmt.Errorf("no file part")
	}
	f, err := fhs[0].Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (s *Server) completeUploadExternal(w http.ResponseWriter, r *http.Request, p params) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p["files"]), &files); err != nil || len(files) == 0 {
		writeError(w, "invalid_arguments")
		return
	}
	if p["thread_ts"] != "" && p["channel_id"] == "" {
		writeError(w, "invalid_arguments")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range files {
		if up := s.uploads.pending[f.ID]; up == nil || !up.uploaded {
			writeError(w, "file_not_found")
			return
		}
	}
	out := make([]map[string]string, 0, len(files))
	for _, f := range files {
		up := s.uploads.pending[f.ID]
		delete(s.uploads.pending, f.ID)
		s.uploads.shared = append(s.uploads.shared, SharedFile{ID: f.ID, Name: up.name, Title: f.Title, Data: up.data,
			Channel: p["channel_id"], ThreadTS: p["thread_ts"], InitialComment: p["initial_comment"], At: arrival.Of(r)})
		out = append(out, map[string]string{"id": f.ID, "title": f.Title})
	}
	writeOK(w, map[string]any{"files": out})
}
