package discord

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The REST routes, as FailNext and Calls name them (method, then the path
// below /api/v9).
const (
	RouteAny            = "*" // every route (FailNext only)
	RouteGateway        = "GET /gateway"
	RouteGatewayBot     = "GET /gateway/bot"
	RouteMe             = "GET /users/@me"
	RouteCreateDM       = "POST /users/@me/channels"
	RouteCreateMessage  = "POST /channels/{channel}/messages"
	RouteEditMessage    = "PATCH /channels/{channel}/messages/{message}"
	RouteTyping         = "POST /channels/{channel}/typing"
	RouteCallback       = "POST /interactions/{id}/{token}/callback"
	RouteEditOriginal   = "PATCH /webhooks/{app}/{token}/messages/{message}"
	RouteFollowup       = "POST /webhooks/{app}/{token}"
	RouteListCommands   = "GET /applications/{app}/commands"
	RoutePutCommands    = "PUT /applications/{app}/commands"
	RouteCreateCommand  = "POST /applications/{app}/commands"
	RouteListGuildCmds  = "GET /applications/{app}/guilds/{guild}/commands"
	RoutePutGuildCmds   = "PUT /applications/{app}/guilds/{guild}/commands"
	RouteCreateGuildCmd = "POST /applications/{app}/guilds/{guild}/commands"
)

// maxBody bounds a request body.
const maxBody = 8 << 20

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handlers := map[string]http.HandlerFunc{
		RouteGateway:        s.gateway,
		RouteGatewayBot:     s.gatewayBot,
		RouteMe:             s.me,
		RouteCreateDM:       s.createDM,
		RouteCreateMessage:  s.createMessage,
		RouteEditMessage:    s.editMessage,
		RouteTyping:         s.startTyping,
		RouteCallback:       s.callback,
		RouteEditOriginal:   s.editOriginal,
		RouteFollowup:       s.followup,
		RouteListCommands:   s.listCommands,
		RoutePutCommands:    s.putCommands,
		RouteCreateCommand:  s.createCommand,
		RouteListGuildCmds:  s.listCommands,
		RoutePutGuildCmds:   s.putCommands,
		RouteCreateGuildCmd: s.createCommand,
		RouteStartThread:    s.startThread,
		RouteGetChannel:     s.getChannel,
	}
	for route, h := range handlers {
		method, path, _ := strings.Cut(route, " ")
		mux.Handle(method+" /api/v9"+path, s.wrap(route, h))
	}
	mux.HandleFunc("GET /attachments/{channel}/{id}/{name}", s.serveAttachment)
	mux.HandleFunc("GET /ws/", s.serveGateway)
	mux.HandleFunc("GET /ws", s.serveGateway)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeAPIError(w, &apiError{status: http.StatusNotFound, code: 0, message: "404: Not Found"})
	})
	return mux
}

// wrap checks the Authorization header, counts the call and injects the
// next queued fault before h runs.
func (s *Server) wrap(route string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, bodyLimit(r))
		if r.Header.Get("Authorization") != "Bot "+s.opts.Token {
			writeAPIError(w, &apiError{status: http.StatusUnauthorized, code: 0, message: "401: Unauthorized"})
			return
		}
		key := bucketKey(route, r)
		s.mu.Lock()
		s.calls[route]++
		now := time.Now()
		if until, ok := s.penalty[key]; ok && now.Before(until) || now.Before(s.globalUntil) {
			s.early++
		}
		s.mu.Unlock()
		if s.limit(w, key) || s.injectFault(w, r, route, key) {
			return
		}
		h(w, r)
	})
}

// apiError is an error answer: {"message":…,"code":…[,"errors":…]}.
type apiError struct {
	status  int
	code    int
	message string
	errors  any
}

// Error describes the error for logs.
func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.code, e.message) }

func writeAPIError(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"message": e.message, "code": e.code}
	if e.errors != nil {
		body["errors"] = e.errors
	}
	writeJSON(w, e.status, body)
}

// formError is Discord's 50035 Invalid Form Body naming the field at path
// (e.g. "components", "0", "components", "1", "custom_id").
func formError(code, message string, path ...string) *apiError {
	var tree any = map[string]any{"_errors": []map[string]string{{"code": code, "message": message}}}
	for i := len(path) - 1; i >= 0; i-- {
		tree = map[string]any{path[i]: tree}
	}
	return &apiError{status: http.StatusBadRequest, code: 50035, message: "Invalid Form Body", errors: tree}
}

var (
	errUnknownMessage     = &apiError{status: http.StatusNotFound, code: 10008, message: "Unknown Message"}
	errUnknownWebhook     = &apiError{status: http.StatusNotFound, code: 10015, message: "Unknown Webhook"}
	errUnknownInteraction = &apiError{status: http.StatusNotFound, code: 10062, message: "Unknown interaction"}
	errAcknowledged       = &apiError{status: http.StatusBadRequest, code: 40060, message: "Interaction has already been acknowledged."}
	errEmptyMessage       = &apiError{status: http.StatusBadRequest, code: 50006, message: "Cannot send an empty message"}
	errNotAuthor          = &apiError{status: http.StatusForbidden, code: 50005, message: "Cannot edit a message authored by another user"}
	errMissingAccess      = &apiError{status: http.StatusForbidden, code: 50001, message: "Missing Access"}
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"message":"fake: encoding","code":0}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// decode reads a JSON body into v; a body that is not JSON is Discord's 50109.
func decode(r *http.Request, v any) *apiError {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &apiError{status: http.StatusRequestEntityTooLarge, code: 40005, message: "Request entity too large"}
		}
		return &apiError{status: http.StatusBadRequest, code: 50109, message: "The request body contains invalid JSON."}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &apiError{status: http.StatusBadRequest, code: 50109, message: "The request body contains invalid JSON."}
	}
	return nil
}

// Calls returns how many requests of route arrived (refused ones included,
// 401s excluded).
func (s *Server) Calls(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if route == RouteAny {
		n := 0
		for _, c := range s.calls {
			n += c
		}
		return n
	}
	return s.calls[route]
}

// Early returns how many requests arrived on a route (or anywhere, after a
// global one) before the retry_after of a 429 it was given had passed: a
// client that honours retry_after makes none.
func (s *Server) Early() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.early
}
