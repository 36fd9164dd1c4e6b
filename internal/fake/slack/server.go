// Package slack is a loopback fake of Slack for tests and benchmarks: the
// Web API (POST /api/<method>, form-encoded or JSON bodies, the token in the
// form or in Authorization: Bearer, {"ok":true,…} and {"ok":false,"error":…}
// answers) and Socket Mode (apps.connections.open hands out a ws:// URL on
// the same server; the websocket says hello, sends PING frames and
// envelopes, and records acknowledgements). It enforces Slack's message
// limits, records what the bot sends, and can inject events, button
// presses, slash commands, disconnects, dropped sockets and HTTP faults.
// Signer builds signed Events API requests for the HTTP mode.
//
// Point the unmodified slack-go at it:
//
//	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.URL()+"/api/"),
//		slack.OptionAppLevelToken(fake.AppToken()))
//	client := socketmode.New(api)
//
// Importers alias it: fakeslack "github.com/gatehouse-bot/gatehouse/internal/fake/slack".
package slack

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/fake/arrival"
)

// Options configure a Server; zero fields take defaults.
type Options struct {
	BotToken   string // xoxb token the Web API methods accept; default "xoxb-1-fake-bot-token"
	AppToken   string // xapp token apps.connections.open accepts; default "xapp-1-A0FAKE-fake-app-token"
	TeamID     string // default "T0FAKE"
	TeamDomain string // default "gatehouse-test"
	AppID      string // default "A0FAKE"
	BotUserID  string // the bot's member id; default "U0BOT"
	BotID      string // the bot's bot_id; default "B0BOT"
	BotName    string // default "gatehouse"
	// VerificationToken is the deprecated "token" field Slack still puts in
	// payloads; default "fake-verification-token".
	VerificationToken string
	// PingInterval is how often a Socket Mode connection gets a websocket
	// PING; default 1s; negative: never (a client then reconnects every
	// ping interval of its own, as against a dead link).
	PingInterval time.Duration
	// DisconnectGrace is how long after a disconnect envelope the fake
	// closes that connection itself, as Slack does; default 1s; negative:
	// never.
	DisconnectGrace time.Duration
	// RetryAfter is the Retry-After header of FaultRateLimited, in seconds;
	// default 1.
	RetryAfter int
	// ChannelRate, when positive, paces chat.postMessage per channel as
	// Slack does (about one message a second, short bursts tolerated): each
	// channel has a bucket of ChannelBurst posts that refills one post per
	// ChannelRate; a post finding it empty is answered 429 with a
	// Retry-After of the whole seconds (at least 1) until it has one again.
	ChannelRate time.Duration
	// ChannelBurst is the bucket's size; default 3.
	ChannelBurst int
	// NoFilesScope answers file downloads as Slack does for a bot token
	// without the files:read scope: 200 with its HTML sign-in page.
	NoFilesScope bool
	// EchoPosts makes every chat.postMessage come back as a message event
	// from the bot (user BotUserID, bot_id BotID), as Slack delivers a bot's
	// own messages to a subscription: the adapter must ignore them.
	EchoPosts bool
}

// Server is the fake Slack. It is safe for concurrent use.
type Server struct {
	opts Options
	srv  *httptest.Server
	base int64 // the seconds part of the first ts
	wg   sync.WaitGroup

	// refuse makes every upload fail as too large (RefuseUploads).
	refuse atomic.Bool

	mu         sync.Mutex
	closed     chan struct{}
	release    chan struct{} // closed by Release: held calls go on
	seq        int           // last ts, envelope, event and trigger number handed out
	posts      []Post
	updates    []Update
	ephemerals []Ephemeral
	responses  []ResponseURLPost
	messages   map[msgKey]*Message
	said       map[msgKey]Event // messages not the bot's posts: injected or Said
	replyCalls []RepliesCall
	respURLs   map[string]int // response_url id → posts received
	faults     map[string][]Fault
	calls      map[string]int
	penalty    map[string]time.Time // method or channel → end of its 429 pause
	early      int
	limited    int                // 429s answered
	buckets    map[string]*bucket // channel → its chat.postMessage allowance
	socket     socketState
	files      fileState
	uploads    uploadState // files.getUploadURLExternal … completeUploadExternal
}

type msgKey struct{ channel, ts string }

// New starts a fake on 127.0.0.1.
func New(o Options) *Server {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&o.BotToken, "xoxb-1-fake-bot-token")
	def(&o.AppToken, "xapp-1-A0FAKE-fake-app-token")
	def(&o.TeamID, "T0FAKE")
	def(&o.TeamDomain, "gatehouse-test")
	def(&o.AppID, "A0FAKE")
	def(&o.BotUserID, "U0BOT")
	def(&o.BotID, "B0BOT")
	def(&o.BotName, "gatehouse")
	def(&o.VerificationToken, "fake-verification-token")
	if o.PingInterval == 0 {
		o.PingInterval = time.Second
	}
	if o.DisconnectGrace == 0 {
		o.DisconnectGrace = time.Second
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 1
	}
	if o.ChannelBurst <= 0 {
		o.ChannelBurst = 3
	}
	s := &Server{
		opts:     o,
		base:     time.Now().Unix(),
		closed:   make(chan struct{}),
		release:  make(chan struct{}),
		messages: make(map[msgKey]*Message),
		said:     make(map[msgKey]Event),
		respURLs: make(map[string]int),
		faults:   make(map[string][]Fault),
		calls:    make(map[string]int),
		penalty:  make(map[string]time.Time),
		buckets:  make(map[string]*bucket),
		socket:   newSocketState(),
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	// The records' At is each request's arrival, as Slack counts it
	// against its limits, however late this process reads it.
	s.srv.Listener = arrival.Listen(s.srv.Listener)
	s.srv.Config.ConnContext = arrival.ConnContext
	s.srv.Start()
	return s
}

// URL is the server's base URL; the Web API is at URL()+"/api/" (the
// api_url of a gateway configuration, trailing slash included).
func (s *Server) URL() string { return s.srv.URL }

// BotToken is the xoxb token the Web API methods accept.
func (s *Server) BotToken() string { return s.opts.BotToken }

// AppToken is the xapp token apps.connections.open accepts.
func (s *Server) AppToken() string { return s.opts.AppToken }

// BotUserID is the bot's member id, as auth.test returns it.
func (s *Server) BotUserID() string { return s.opts.BotUserID }

// BotID is the bot's bot_id, as auth.test returns it.
func (s *Server) BotID() string { return s.opts.BotID }

// TeamID is the workspace id.
func (s *Server) TeamID() string { return s.opts.TeamID }

// Close ends every Socket Mode connection and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	conns := s.liveLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.end()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.wg.Wait()
}

// FailNext makes the next n calls of method fail with f; method "" means
// the next n calls of any method (Web API calls only, not response_url
// posts). A method's own faults are used before the ones for any method.
func (s *Server) FailNext(method string, n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], f)
	}
}

// Release lets every call held by FaultHang go on (answered normally).
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.release)
	s.release = make(chan struct{})
}

// Calls returns how many calls of method arrived (failed ones included).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Early returns how many calls arrived for a channel (or, without a
// channel, for the same method) before the Retry-After of a 429 it was
// given had passed: a client that honours Retry-After makes none.
func (s *Server) Early() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.early
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/"):
		s.serveAPI(w, r, strings.TrimPrefix(r.URL.Path, "/api/"))
	case r.URL.Path == socketPath:
		s.serveSocket(w, r)
	case strings.HasPrefix(r.URL.Path, filesPath):
		s.serveFile(w, r)
	case strings.HasPrefix(r.URL.Path, uploadPath):
		s.serveUpload(w, r, strings.TrimPrefix(r.URL.Path, uploadPath))
	case strings.HasPrefix(r.URL.Path, responsePath):
		s.serveResponseURL(w, r, strings.TrimPrefix(r.URL.Path, responsePath))
	default:
		http.NotFound(w, r)
	}
}

type handler func(http.ResponseWriter, *http.Request, params)

func (s *Server) handlers() map[string]handler {
	return map[string]handler{
		"auth.test":                    s.authTest,
		"apps.connections.open":        s.connectionsOpen,
		"chat.postMessage":             s.postMessage,
		"chat.update":                  s.update,
		"chat.postEphemeral":           s.postEphemeral,
		"conversations.replies":        s.replies,
		"conversations.open":           s.conversationsOpen,
		"files.getUploadURLExternal":   s.getUploadURLExternal,
		"files.completeUploadExternal": s.completeUploadExternal,
	}
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, method string) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p, err := parseParams(r)
	if err != nil {
		writeError(w, "invalid_form_data")
		return
	}
	h, ok := s.handlers()[method]
	if !ok {
		writeError(w, "unknown_method")
		return
	}
	s.mu.Lock()
	s.calls[method]++
	key := method
	if ch := p["channel"]; ch != "" {
		key = ch
	}
	if until, ok := s.penalty[key]; ok && time.Now().Before(until) {
		s.early++
	}
	s.mu.Unlock()
	if e := s.checkToken(method, bearerOr(r, p["token"])); e != "" {
		writeError(w, e)
		return
	}
	if s.injectFault(w, r, method, key) {
		return
	}
	if method == "chat.postMessage" && !s.pace(w, p["channel"]) {
		return
	}
	h(w, r, p)
}

// checkToken returns Slack's error for a missing or wrong token, or "".
// apps.connections.open wants the app-level token, the rest the bot token.
func (s *Server) checkToken(method, token string) string {
	want := s.opts.BotToken
	if method == "apps.connections.open" {
		want = s.opts.AppToken
	}
	switch token {
	case "":
		return "not_authed"
	case want:
		return ""
	default:
		return "invalid_auth"
	}
}

// injectFault answers the call with the next fault queued for method (or
// for any method) and reports whether it did.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request, method, key string) bool {
	s.mu.Lock()
	q := method
	if len(s.faults[q]) == 0 {
		q = ""
	}
	if len(s.faults[q]) == 0 {
		s.mu.Unlock()
		return false
	}
	f := s.faults[q][0]
	s.faults[q] = s.faults[q][1:]
	if f == FaultRateLimited {
		s.penalty[key] = time.Now().Add(time.Duration(s.opts.RetryAfter) * time.Second)
		s.limited++
	}
	release, closed := s.release, s.closed
	s.mu.Unlock()
	switch f {
	case FaultHang:
		select {
		case <-release:
			return false
		case <-closed:
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("<html><body><h1>503 Service Unavailable</h1></body></html>"))
	case FaultRateLimited:
		writeTooMany(w, s.opts.RetryAfter)
	case FaultServer:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("<html><body><h1>500 Internal Server Error</h1></body></html>"))
	case FaultUnavailable:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("<html><body><h1>503 Service Unavailable</h1></body></html>"))
	case FaultMalformed:
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(`{"ok":true,"channel":`))
	default:
		return false
	}
	return true
}

func (s *Server) authTest(w http.ResponseWriter, _ *http.Request, _ params) {
	writeOK(w, map[string]any{
		"url":     "https://" + s.opts.TeamDomain + ".slack.com/",
		"team":    "Gatehouse Test",
		"user":    s.opts.BotName,
		"team_id": s.opts.TeamID,
		"user_id": s.opts.BotUserID,
		"bot_id":  s.opts.BotID,

		"is_enterprise_install": false,
	})
}

// nextLocked returns the next number of the fake's one sequence.
func (s *Server) nextLocked() int {
	s.seq++
	return s.seq
}

// tsLocked returns a new message ts, unique and increasing.
func (s *Server) tsLocked() string {
	n := int64(s.nextLocked())
	return fmt.Sprintf("%d.%06d", s.base+n/1_000_000, n%1_000_000)
}
