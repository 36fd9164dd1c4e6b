package telegram

import (
	"net/http"
	"strconv"
	"strings"
)

// fileState is the fake's file storage: what getFile describes and
// /file/bot<TOKEN>/<path> serves.
type fileState struct {
	files     map[string]*storedFile // file_id → file
	byPath    map[string]*storedFile // file_path → file
	downloads []Download
	redirect  string // when set, every download is redirected here
}

type storedFile struct {
	id   string
	path string
	data []byte
	// size is the file_size getFile announces (len(data) unless set).
	size int
}

// Download records one request for a file's bytes.
type Download struct {
	FileID string
	Path   string
	// Token is the token in the request's path, as received.
	Token string
}

// AddFile stores data as a file a message can carry and returns its
// file_id; getFile describes it (file_size len(data)) and its file_path
// serves it. ext is the file_path's extension, e.g. ".jpg" (may be empty).
func (s *Server) AddFile(data []byte, ext string) string {
	return s.AddFileSized(data, ext, len(data))
}

// AddFileSized is AddFile with the file_size getFile announces set to
// size (a platform that lies, or a file that changed).
func (s *Server) AddFileSized(data []byte, ext string, size int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files.files == nil {
		s.files.files, s.files.byPath = map[string]*storedFile{}, map[string]*storedFile{}
	}
	n := len(s.files.files) + 1
	f := &storedFile{id: "file-" + strconv.Itoa(n), path: "documents/file_" + strconv.Itoa(n) + ext, data: append([]byte(nil), data...), size: size}
	s.files.files[f.id] = f
	s.files.byPath[f.path] = f
	return f.id
}

// Downloads returns the file downloads requested so far, in order.
func (s *Server) Downloads() []Download {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Download(nil), s.files.downloads...)
}

// RedirectFiles makes every file download answer 302 to target + the
// file's path ("" serves them again).
func (s *Server) RedirectFiles(target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files.redirect = target
}

func (s *Server) getFile(w http.ResponseWriter, _ *http.Request, p params) {
	s.mu.Lock()
	f, ok := s.files.files[p["file_id"]]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusBadRequest, "Bad Request: invalid file_id", 0)
		return
	}
	writeResult(w, map[string]any{"file_id": f.id, "file_unique_id": "u" + f.id, "file_size": f.size, "file_path": f.path})
}

// serveFile answers GET /file/bot<TOKEN>/<path>.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/file/bot")
	token, path, ok := strings.Cut(rest, "/")
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	f := s.files.byPath[path]
	d := Download{Path: path, Token: token}
	if f != nil {
		d.FileID = f.id
	}
	s.files.downloads = append(s.files.downloads, d)
	redirect := s.files.redirect
	s.mu.Unlock()
	if token != s.opts.Token {
		writeError(w, http.StatusUnauthorized, "Unauthorized", 0)
		return
	}
	if f == nil {
		http.NotFound(w, r)
		return
	}
	if redirect != "" {
		http.Redirect(w, r, redirect+"/"+path, http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	_, _ = w.Write(f.data)
}
