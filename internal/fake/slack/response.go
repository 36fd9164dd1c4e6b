package slack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/gatehouse-bot/gatehouse/internal/fake/arrival"
)

// responsePath is where the fake's response_url endpoints live.
const responsePath = "/response/"

// maxResponseUses is how many times Slack accepts posts to one
// response_url.
const maxResponseUses = 5

// ResponseURLPosts returns the posts to response_urls the fake handed out,
// in order.
func (s *Server) ResponseURLPosts() []ResponseURLPost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ResponseURLPost(nil), s.responses...)
}

// newResponseURLLocked hands out a response_url for an interaction or a
// slash command.
func (s *Server) newResponseURLLocked() string {
	id := fmt.Sprintf("T%d", s.nextLocked())
	s.respURLs[id] = 0
	return s.srv.URL + responsePath + id
}

// serveResponseURL records a JSON post to a response_url. Unknown ids get
// 404 expired_url, the sixth post to one id 404 used_url.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	var msg struct {
		Text            string          `json:"text"`
		Blocks          json.RawMessage `json:"blocks"`
		ThreadTS        string          `json:"thread_ts"`
		ResponseType    string          `json:"response_type"`
		ReplaceOriginal bool            `json:"replace_original"`
		DeleteOriginal  bool            `json:"delete_original"`
	}
	if err != nil || json.Unmarshal(body, &msg) != nil {
		writeStatus(w, http.StatusBadRequest, map[string]any{"ok": false, "error": "invalid_payload"})
		return
	}
	s.mu.Lock()
	uses, known := s.respURLs[id]
	if known && uses < maxResponseUses {
		s.respURLs[id]++
		s.responses = append(s.responses, ResponseURLPost{
			URL: s.srv.URL + responsePath + id, Text: msg.Text, Blocks: msg.Blocks, ThreadTS: msg.ThreadTS,
			ResponseType: msg.ResponseType, ReplaceOriginal: msg.ReplaceOriginal, DeleteOriginal: msg.DeleteOriginal,
			Body: body, At: arrival.Of(r),
		})
	}
	s.mu.Unlock()
	switch {
	case !known:
		writeStatus(w, http.StatusNotFound, map[string]any{"ok": false, "error": "expired_url"})
	case uses >= maxResponseUses:
		writeStatus(w, http.StatusNotFound, map[string]any{"ok": false, "error": "used_url"})
	default:
		writeOK(w, nil)
	}
}
