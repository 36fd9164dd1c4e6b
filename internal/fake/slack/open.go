package slack

import (
	"net/http"
	"strings"
)

// conversationsOpen answers conversations.open for one user: the direct
// message channel with them, DMChannel(user), the same every time (as
// Slack answers an open DM); a channel given is answered as it is. No
// user, or several (a group DM, which the fake does not keep), →
// users_list_not_supplied.
func (s *Server) conversationsOpen(w http.ResponseWriter, _ *http.Request, p params) {
	users := strings.Split(strings.TrimSpace(p["users"]), ",")
	switch {
	case p["channel"] != "":
		writeOK(w, map[string]any{"channel": map[string]any{"id": p["channel"]}, "already_open": true})
	case len(users) != 1 || users[0] == "":
		writeError(w, "users_list_not_supplied")
	default:
		writeOK(w, map[string]any{"channel": map[string]any{"id": DMChannel(users[0]), "is_im": true, "user": users[0]}, "already_open": true})
	}
}
