// Package discord is a loopback fake of Discord's REST API (v9, JSON) and
// websocket gateway for tests and benchmarks, driven through the unmodified
// github.com/bwmarrin/discordgo pointed at it: Session.Client uses
// Server.Transport (scheme and host rewritten), and the gateway URL comes
// from GET /api/v9/gateway.
//
// It enforces Discord's rules that matter to a bot: the Authorization
// header on every call, 2000 characters of content, component limits,
// interaction callbacks within 3 seconds and only once. It records what the
// bot sends, injects messages, button presses and slash commands as gateway
// dispatches, and injects faults: 429 with a JSON retry_after, 5xx,
// malformed payloads, dropped sockets, op 7, op 9, missing heartbeat ACKs.
//
// Importers alias it: fakediscord "github.com/gatehouse-bot/gatehouse/internal/fake/discord".
package discord

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Options configure a Server; zero fields take defaults.
type Options struct {
	Token   string // bot token, without "Bot "; default "FAKE-discord-bot-token.0123456789"
	BotID   string // default "1100000000000000001"
	BotName string // default "gatehouse"
	AppID   string // application id; default BotID, as for most bots
	// HeartbeatInterval is HELLO's heartbeat_interval; default 41.25s as
	// on Discord. Tests shorten it.
	HeartbeatInterval time.Duration
	// InteractionTimeout is how long after its dispatch an interaction may
	// be answered (later: 404 Unknown interaction); default 3s.
	InteractionTimeout time.Duration
	// Now is the fake's clock for interaction deadlines; default time.Now.
	// Tests advance their own clock to answer late without sleeping.
	Now func() time.Time
	// RetryAfter is the retry_after of FaultTooMany; default 50ms.
	RetryAfter time.Duration
	// Compress sends the frames after an IDENTIFY that asked for
	// compression as zlib-compressed binary messages, as Discord may.
	// Default: text frames (discordgo reads both).
	Compress bool
	// RateLimit emulates Discord's per-route buckets and global limit;
	// zero: no limits and no X-RateLimit headers on success.
	RateLimit RateLimit
	// NoEcho stops the gateway from dispatching the bot's own messages back
	// as MESSAGE_CREATE, which Discord does.
	NoEcho bool
}

// Server is the fake. It is safe for concurrent use.
type Server struct {
	opts Options
	srv  *httptest.Server
	wg   sync.WaitGroup // gateway connections

	// refuse makes every message with files fail as too large (RefuseUploads).
	refuse atomic.Bool

	mu          sync.Mutex
	closed      chan struct{}
	release     chan struct{}
	nextID      int64
	channels    map[string]string // channel id → guild id ("" for DMs)
	dms         map[string]string // user id → DM channel id
	users       map[string]User
	messages    map[string]*stored
	sent        []Sent
	files       []File // sent with messages (multipart files[n])
	edits       []Edit
	threads     []Thread // started from messages
	typing      []Typing
	responses   []InteractionResponse
	interacts   map[string]*interaction // by id
	byToken     map[string]*interaction
	commands    map[string][]Command // guild id ("" global) → commands
	identifies  []Identify
	resumes     []Resume
	conns       map[*conn]struct{}
	connCount   int
	sessions    map[string]*session
	backlog     []event // dispatches waiting for a first session
	noAcks      bool
	noHello     int // the next sockets opened that get no HELLO
	heartbeats  int
	faults      map[string][]Fault
	calls       map[string]int
	penalty     map[string]time.Time // bucket → end of its 429 pause
	buckets     map[string]*bucket
	globalWin   bucket
	overLimit   int
	globalUntil time.Time
	early       int
	cdn         cdnState
}

// New starts a fake on 127.0.0.1.
func New(o Options) *Server {
	if o.Token == "" {
		o.Token = "FAKE-discord-bot-token.0123456789"
	}
	if o.BotID == "" {
		o.BotID = "1100000000000000001"
	}
	if o.BotName == "" {
		o.BotName = "gatehouse"
	}
	if o.AppID == "" {
		o.AppID = o.BotID
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = 41250 * time.Millisecond
	}
	if o.InteractionTimeout <= 0 {
		o.InteractionTimeout = 3 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 50 * time.Millisecond
	}
	s := &Server{
		opts:      o,
		closed:    make(chan struct{}),
		release:   make(chan struct{}),
		nextID:    1200000000000000000,
		channels:  make(map[string]string),
		dms:       make(map[string]string),
		users:     make(map[string]User),
		messages:  make(map[string]*stored),
		interacts: make(map[string]*interaction),
		byToken:   make(map[string]*interaction),
		commands:  make(map[string][]Command),
		conns:     make(map[*conn]struct{}),
		sessions:  make(map[string]*session),
		faults:    make(map[string][]Fault),
		calls:     make(map[string]int),
		penalty:   make(map[string]time.Time),
		buckets:   make(map[string]*bucket),
	}
	s.users[o.BotID] = s.Bot()
	s.srv = httptest.NewServer(s.routes())
	return s
}

// Start is New for tests: the server closes when tb's test ends.
func Start(tb testing.TB, o Options) *Server {
	tb.Helper()
	s := New(o)
	tb.Cleanup(s.Close)
	return s
}

// URL is the server's base URL, "http://127.0.0.1:PORT": the api_url of a
// gateway configuration, standing in for https://discord.com.
func (s *Server) URL() string { return s.srv.URL }

// GatewayURL is the websocket URL /api/v9/gateway returns.
func (s *Server) GatewayURL() string {
	return "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/ws"
}

// Token is the bot token the server accepts (send it as "Bot " + Token).
func (s *Server) Token() string { return s.opts.Token }

// AppID is the bot's application id.
func (s *Server) AppID() string { return s.opts.AppID }

// Bot is the bot's own user, as /users/@me and READY return it.
func (s *Server) Bot() User {
	return User{ID: s.opts.BotID, Username: s.opts.BotName, Discriminator: "0", Bot: true}
}

// Transport returns a RoundTripper that sends every request to the fake:
// scheme and host (req.Host too) become the fake's, the path and the rest
// are kept. Give it to discordgo as Session.Client's transport.
func (s *Server) Transport() http.RoundTripper {
	return &rewrite{scheme: "http", host: strings.TrimPrefix(s.srv.URL, "http://"), next: s.srv.Client().Transport}
}

// Client is an http.Client using Transport.
func (s *Server) Client() *http.Client {
	return &http.Client{Transport: s.Transport(), Timeout: 20 * time.Second}
}

type rewrite struct {
	scheme, host string
	next         http.RoundTripper
}

// RoundTrip sends a copy of req to the fake.
func (t *rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = t.scheme, t.host, t.host
	return t.next.RoundTrip(r)
}

// Close closes the gateway sockets, releases held requests and stops the
// server. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if isClosed(s.closed) {
		s.mu.Unlock()
		return
	}
	close(s.closed)
	conns := s.liveLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.drop()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.wg.Wait()
}

// Release lets every request held by FaultHang go on (answered normally).
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.release)
	s.release = make(chan struct{})
}

// newIDLocked returns a fresh snowflake.
func (s *Server) newIDLocked() string {
	s.nextID++
	return strconv.FormatInt(s.nextID, 10)
}

func (s *Server) now() time.Time { return s.opts.Now() }
