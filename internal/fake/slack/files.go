package slack

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// filesPath starts the path of a file's url_private_download, as on
// files.slack.com: /files-pri/<team>-<file id>/download/<name>.
const filesPath = "/files-pri/"

// File is a file shared in a message (Event.Files). ID is given when
// empty; Size is len(Data) when zero (set it to announce another size).
// URLPrivateDownload, when the test leaves it empty, is the fake's own URL
// serving Data to a request with the bot token as a bearer; one the test
// sets (another host, say) is left alone and not served.
type File struct {
	ID                 string
	Name               string
	Mimetype           string
	Size               int
	Data               []byte
	URLPrivateDownload string
	// Subtype and MediaDisplayType are sent when set: an audio clip
	// recorded in Slack has "slack_audio" and "audio" (and a mimetype
	// of audio/* or, at times, video/*).
	Subtype          string
	MediaDisplayType string
}

// FileDownload records one request for a file's bytes.
type FileDownload struct {
	FileID string
	// Authorization is the request's Authorization header, as received.
	Authorization string
	// Served is true when the bytes were sent (known file, right token).
	Served bool
}

// fileState is the fake's file storage.
type fileState struct {
	files     map[string]*storedFile // path below filesPath → file
	downloads []FileDownload
	redirect  string // when set, every authorised download is redirected here
}

type storedFile struct {
	id   string
	data []byte
}

// fileObjectsLocked stores files and returns their file objects, as a
// message event carries them.
func (s *Server) fileObjectsLocked(files []File) []map[string]any {
	out := make([]map[string]any, 0, len(files))
	for _, f := range files {
		if f.ID == "" {
			f.ID = fmt.Sprintf("F%08dFAKE", s.nextLocked())
		}
		if f.Size == 0 {
			f.Size = len(f.Data)
		}
		name := urlName(f.Name)
		if f.URLPrivateDownload == "" {
			if s.files.files == nil {
				s.files.files = make(map[string]*storedFile)
			}
			key := s.opts.TeamID + "-" + f.ID + "/download/" + name
			s.files.files[key] = &storedFile{id: f.ID, data: append([]byte(nil), f.Data...)}
			f.URLPrivateDownload = s.srv.URL + filesPath + key
		}
		view, _ := strings.CutSuffix(f.URLPrivateDownload, "/download/"+name)
		out = append(out, map[string]any{
			"id": f.ID, "created": s.base, "timestamp": s.base, "name": f.Name, "title": f.Name,
			"mimetype": f.Mimetype, "filetype": "text", "pretty_type": "Plain Text", "user": "",
			"mode": "hosted", "editable": false, "is_external": false, "external_type": "",
			"is_public": false, "public_url_shared": false, "display_as_bot": false, "username": "",
			"size": f.Size, "url_private": view + "/" + name, "url_private_download": f.URLPrivateDownload,
			"permalink": "https://" + s.opts.TeamDomain + ".slack.com/files/U0/" + f.ID + "/" + name,
		})
		if f.Subtype != "" {
			out[len(out)-1]["subtype"] = f.Subtype
		}
		if f.MediaDisplayType != "" {
			out[len(out)-1]["media_display_type"] = f.MediaDisplayType
		}
	}
	return out
}

// urlName is the name a file URL ends with: letters, digits, dots, dashes
// and underscores kept, the rest replaced.
func urlName(name string) string {
	out := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, name)
	if strings.Trim(out, ".") == "" {
		return "file"
	}
	return out
}

// FileDownloads returns the file downloads requested so far, in order.
func (s *Server) FileDownloads() []FileDownload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FileDownload(nil), s.files.downloads...)
}

// RedirectFiles makes every authorised file download answer 302 to
// target + the request's path ("" serves them again).
func (s *Server) RedirectFiles(target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files.redirect = target
}

// serveFile answers GET /files-pri/<team>-<id>/download/<name>: the bytes
// to a request bearing the bot token, 401 to any other.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f := s.files.files[strings.TrimPrefix(r.URL.Path, filesPath)]
	auth := r.Header.Get("Authorization")
	authorised := auth == "Bearer "+s.opts.BotToken
	d := FileDownload{Authorization: auth}
	if f != nil {
		d.FileID = f.id
	}
	redirect := s.files.redirect
	d.Served = f != nil && authorised && redirect == "" && !s.opts.NoFilesScope
	s.files.downloads = append(s.files.downloads, d)
	s.mu.Unlock()
	switch {
	case r.Method != http.MethodGet:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case !authorised:
		http.Error(w, "not_authed", http.StatusUnauthorized)
	case f == nil:
		http.NotFound(w, r)
	case redirect != "":
		http.Redirect(w, r, redirect+r.URL.Path, http.StatusFound)
	case s.opts.NoFilesScope:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to your workspace</body></html>"))
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
		_, _ = w.Write(f.data)
	}
}
