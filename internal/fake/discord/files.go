package discord

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
)

// cdnFile is an attachment the fake's CDN serves.
type cdnFile struct {
	channel, id, name string
	data              []byte
	hm                string // the signature its URL carries
}

// cdnState is the fake's attachment storage: what
// GET /attachments/{channel}/{id}/{name} serves.
type cdnState struct {
	files     map[string]*cdnFile // attachment id → file
	downloads []Download
	redirect  string // when set, every download is redirected here
}

// Download records one request for an attachment's bytes.
type Download struct {
	ChannelID    string
	AttachmentID string
	// Authorization is the request's Authorization header, as received:
	// Discord's CDN needs none, and a bot must not send its token there.
	Authorization string
	// Served is true when the bytes were sent (the URL was known and its
	// signature matched).
	Served bool
}

// addAttachmentLocked stores a's data and gives it its id, size and CDN
// URL when a does not set them. The URL is Discord's shape,
// <cdn>/attachments/<channel>/<id>/<name>?ex=…&is=…&hm=…, signed: a URL
// without the right hm is refused, as Discord's CDN refuses an unsigned
// or expired one.
func (s *Server) addAttachmentLocked(channel string, a Attachment) Attachment {
	if a.ID == "" {
		a.ID = s.newIDLocked()
	}
	if a.Size == 0 {
		a.Size = len(a.Data)
	}
	if a.URL != "" {
		return a // a test's own URL (another host, say): not served here
	}
	if s.cdn.files == nil {
		s.cdn.files = make(map[string]*cdnFile)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	f := &cdnFile{channel: channel, id: a.ID, name: urlName(a.Filename), data: append([]byte(nil), a.Data...), hm: hex.EncodeToString(b)}
	s.cdn.files[a.ID] = f
	a.URL = s.srv.URL + "/attachments/" + channel + "/" + a.ID + "/" + f.name + "?ex=6a000000&is=69f00000&hm=" + f.hm + "&"
	return a
}

// urlName is the name a CDN URL ends with: Discord keeps letters, digits,
// dots, dashes and underscores and replaces the rest.
func urlName(name string) string {
	out := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, name)
	if strings.Trim(out, ".") == "" {
		return "unknown"
	}
	return out
}

// Downloads returns the attachment downloads requested so far, in order.
func (s *Server) Downloads() []Download {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Download(nil), s.cdn.downloads...)
}

// RedirectAttachments makes every attachment download answer 302 to
// target + the request's path ("" serves them again).
func (s *Server) RedirectAttachments(target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cdn.redirect = target
}

// serveAttachment answers GET /attachments/{channel}/{id}/{name}, the
// CDN's route: no Authorization needed, the signed URL is the permission.
func (s *Server) serveAttachment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f := s.cdn.files[r.PathValue("id")]
	ok := f != nil && f.channel == r.PathValue("channel") && f.name == r.PathValue("name") && r.URL.Query().Get("hm") == f.hm
	d := Download{ChannelID: r.PathValue("channel"), AttachmentID: r.PathValue("id"), Authorization: r.Header.Get("Authorization")}
	redirect := s.cdn.redirect
	d.Served = ok && redirect == ""
	s.cdn.downloads = append(s.cdn.downloads, d)
	s.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("This content is no longer available."))
		return
	}
	if redirect != "" {
		http.Redirect(w, r, redirect+r.URL.Path, http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	_, _ = w.Write(f.data)
}
