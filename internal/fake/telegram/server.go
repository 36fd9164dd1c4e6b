// Package telegram is a loopback fake of the Telegram Bot API for tests and
// benchmarks. It speaks the real wire format: POST /bot<TOKEN>/<method> with
// form-encoded (or multipart or JSON) parameters, {"ok":true,"result":…}
// envelopes and {"ok":false,"error_code":…,"description":…} errors. It
// long-polls getUpdates with offset semantics, records what the bot sends,
// enforces the 4096-character limit, checks HTML entities, and can inject
// updates, callback queries and faults. It stores files (AddFile) that
// getFile describes and GET /file/bot<TOKEN>/<path> serves, recording
// every download, and takes the files the bot sends (sendDocument,
// sendPhoto: multipart, recorded byte for byte, see Uploads).
//
// Importers alias it: faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram".
package telegram

import (
	"net"
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
	Token       string        // default "123456:TEST-fake-telegram-token-0123456789"
	BotID       int64         // default 777000111
	BotUsername string        // default "gatehouse_bot"
	MaxPollWait time.Duration // longest a getUpdates is held, whatever its timeout; default 1s
	RetryAfter  int           // retry_after of FaultTooMany in seconds; default 1
	// RetryAfterUnit is how long one retry_after unit lasts for the fake's
	// own bookkeeping (Early); default 1s. Tests that shorten the client's
	// unit shorten this one to match.
	RetryAfterUnit time.Duration
	// QueryTTL is how long after a button press (InjectCallback) its
	// callback query may still be answered; later answers get Telegram's
	// 400 "query is too old". Zero: queries never expire.
	QueryTTL time.Duration
	// AnswerAtOnce makes getUpdates answer at once, with nothing when no
	// update is pending, whatever its timeout: what a proxy, a misbehaving
	// self-hosted Bot API server or the telegram-test-api emulator do.
	AnswerAtOnce bool
	// Listener, when set, is where the fake serves instead of a new port
	// on 127.0.0.1: an in-memory listener lets it run inside a
	// testing/synctest bubble, on the bubble's clock. URL is then
	// "http://" + Listener.Addr().
	Listener net.Listener
}

// Server is the fake Bot API. It is safe for concurrent use.
type Server struct {
	opts Options
	srv  *httptest.Server

	// refuse makes every upload fail as too large (RefuseUploads).
	refuse atomic.Bool

	mu       sync.Mutex
	closed   chan struct{}
	release  chan struct{}
	arrived  chan struct{} // closed and replaced when an update is injected
	updates  []update
	nextUpd  int
	chats    map[int64]Chat
	nextMsg  map[int64]int
	messages map[msgKey]*Sent
	sent     []Sent
	answers  []Answer
	actions  []ChatAction
	polls    []Poll
	queries  map[string]time.Time // callback query id → when it was pressed
	late     int                  // answers refused as too old
	faults   map[string][]Fault
	calls    map[string]int
	reject   bool
	penalty  map[string]time.Time // chat_id -> end of its 429 pause
	early    map[string]int       // method → requests during a 429 pause
	webhook  webhookState
	migrated map[int64]int64 // group chat id → the supergroup it was upgraded to
	files    fileState
	uploads  []Upload          // sendDocument and sendPhoto
	forums   map[int64][]Topic // forum chats (Forum) → the topics created there
	noTopics map[int64]bool    // chats where createForumTopic lacks the right (RefuseTopics)
}

type update struct {
	id  int
	raw []byte
}

type msgKey struct {
	chat int64
	id   int
}

// New starts a fake on 127.0.0.1.
func New(o Options) *Server {
	if o.Token == "" {
		o.Token = "123456:TEST-fake-telegram-token-0123456789"
	}
	if o.BotID == 0 {
		o.BotID = 777000111
	}
	if o.BotUsername == "" {
		o.BotUsername = "gatehouse_bot"
	}
	if o.MaxPollWait <= 0 {
		o.MaxPollWait = time.Second
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 1
	}
	if o.RetryAfterUnit <= 0 {
		o.RetryAfterUnit = time.Second
	}
	s := &Server{
		opts:     o,
		closed:   make(chan struct{}),
		release:  make(chan struct{}),
		arrived:  make(chan struct{}),
		nextUpd:  1000,
		chats:    make(map[int64]Chat),
		nextMsg:  make(map[int64]int),
		messages: make(map[msgKey]*Sent),
		queries:  make(map[string]time.Time),
		faults:   make(map[string][]Fault),
		early:    make(map[string]int),
		calls:    make(map[string]int),
		penalty:  make(map[string]time.Time),
		migrated: make(map[int64]int64),
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	if o.Listener != nil {
		s.srv.Listener.Close()
		s.srv.Listener = o.Listener
	}
	// The records' At is each request's arrival, as Telegram counts it
	// against its limits, however late this process reads it.
	s.srv.Listener = arrival.Listen(s.srv.Listener)
	s.srv.Config.ConnContext = arrival.ConnContext
	s.srv.Start()
	return s
}

// URL is the server's base URL, the api_url of a gateway configuration
// (requests go to URL + "/bot<TOKEN>/<method>").
func (s *Server) URL() string { return s.srv.URL }

// Token is the bot token the server accepts.
func (s *Server) Token() string { return s.opts.Token }

// Bot is the bot's own user, as getMe returns it.
func (s *Server) Bot() User {
	return User{ID: s.opts.BotID, IsBot: true, FirstName: "Gatehouse", Username: s.opts.BotUsername}
}

// Close releases hung and long-polling requests and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Release lets every request currently held by FaultHang go on (it is then
// answered normally).
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.release)
	s.release = make(chan struct{})
}

// FailNext makes the next n requests of method fail with f.
func (s *Server) FailNext(method string, n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], f)
	}
}

// Migrate upgrades the group chat from to the supergroup to: from then on
// every request naming chat_id from fails as the Bot API answers it, 400
// "group chat was upgraded to a supergroup chat" with
// parameters.migrate_to_chat_id.
func (s *Server) Migrate(from, to int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.migrated[from] = to
}

// RejectEntities makes every sendMessage and editMessageText that has a
// parse_mode fail with 400 "can't parse entities" while on is true.
func (s *Server) RejectEntities(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reject = on
}

// Early returns how many requests arrived for a chat (or, without a chat,
// for getUpdates and the like) before the retry_after of a 429 it was
// given had passed: a client that honours retry_after makes none.
func (s *Server) Early() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.early {
		n += e
	}
	return n
}

// EarlyCalls is Early for the requests of one method.
func (s *Server) EarlyCalls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.early[method]
}

// Calls returns how many requests of method arrived (failed ones included).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/file/bot") {
		s.serveFile(w, r)
		return
	}
	token, method, ok := splitPath(r.URL.Path)
	if !ok || r.Method != http.MethodPost && r.Method != http.MethodGet {
		writeError(w, http.StatusNotFound, "Not Found", 0)
		return
	}
	if token != s.opts.Token {
		writeError(w, http.StatusUnauthorized, "Unauthorized", 0)
		return
	}
	p, err := parseParams(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "Bad Request: "+err.Error(), 0)
		return
	}
	s.mu.Lock()
	s.calls[method]++
	if until, ok := s.penalty[p["chat_id"]]; ok && time.Now().Before(until) {
		s.early[method]++
	}
	s.mu.Unlock()
	if s.injectFault(w, r, method, p["chat_id"]) {
		return
	}
	if chat, ok := p.int64("chat_id"); ok {
		s.mu.Lock()
		to, moved := s.migrated[chat]
		s.mu.Unlock()
		if moved {
			writeJSON(w, http.StatusBadRequest, envelope{ErrorCode: http.StatusBadRequest,
				Description: "Bad Request: group chat was upgraded to a supergroup chat", Parameters: &responseParams{MigrateToChatID: to}})
			return
		}
	}
	h, ok := s.handlers()[method]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found: method not found", 0)
		return
	}
	h(w, r, p)
}

// splitPath splits "/bot<TOKEN>/<method>".
func splitPath(path string) (token, method string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/bot")
	if !ok {
		return "", "", false
	}
	token, method, ok = strings.Cut(rest, "/")
	return token, method, ok && method != "" && !strings.Contains(method, "/")
}

type handler func(http.ResponseWriter, *http.Request, params)

func (s *Server) handlers() map[string]handler {
	return map[string]handler{
		"getMe":                  s.getMe,
		"getFile":                s.getFile,
		"getUpdates":             s.getUpdates,
		"sendMessage":            s.sendMessage,
		"sendDocument":           s.sendDocument,
		"sendPhoto":              s.sendPhoto,
		"editMessageText":        s.editMessageText,
		"editMessageReplyMarkup": s.editMessageReplyMarkup,
		"answerCallbackQuery":    s.answerCallbackQuery,
		"sendChatAction":         s.sendChatAction,
		"setWebhook":             s.setWebhook,
		"deleteWebhook":          s.deleteWebhook,
		"getWebhookInfo":         s.getWebhookInfo,
		"getChat":                s.getChat,
		"createForumTopic":       s.createForumTopic,
	}
}

func (s *Server) getMe(w http.ResponseWriter, _ *http.Request, _ params) {
	writeResult(w, s.Bot())
}
