package telegram

import (
	"net/http"
)

// webhookState is what setWebhook set.
type webhookState struct {
	URL            string
	SecretToken    string
	MaxConnections int
	AllowedUpdates string
}

// Webhook returns the webhook URL and secret token last set ("" when none).
func (s *Server) Webhook() (url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhook.URL, s.webhook.SecretToken
}

func (s *Server) setWebhook(w http.ResponseWriter, _ *http.Request, p params) {
	s.mu.Lock()
	s.webhook = webhookState{
		URL: p["url"], SecretToken: p["secret_token"],
		MaxConnections: p.int("max_connections"), AllowedUpdates: p["allowed_updates"],
	}
	s.mu.Unlock()
	writeResult(w, true)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, _ *http.Request, p params) {
	s.mu.Lock()
	s.webhook = webhookState{}
	if p.bool("drop_pending_updates") {
		s.updates = nil
	}
	s.mu.Unlock()
	writeResult(w, true)
}

func (s *Server) getWebhookInfo(w http.ResponseWriter, _ *http.Request, _ params) {
	s.mu.Lock()
	info := map[string]any{
		"url": s.webhook.URL, "has_custom_certificate": false,
		"pending_update_count": len(s.updates),
	}
	if s.webhook.MaxConnections > 0 {
		info["max_connections"] = s.webhook.MaxConnections
	}
	s.mu.Unlock()
	writeResult(w, info)
}
