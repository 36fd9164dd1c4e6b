package discord

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// maxReplay is how many dispatches a session keeps for RESUME; a resume
// from further back is answered INVALID_SESSION.
const maxReplay = 1000

// event is a dispatch (op 0) before it is numbered for a session.
type event struct {
	t           string
	d           any    // rendered with json.Marshal
	raw         []byte // verbatim d when non-nil, valid JSON or not
	intent      int    // intent a session needs to receive it; 0: every session
	privileged  bool   // content blanked for sessions without IntentMessageContent
	interaction string // INTERACTION_CREATE: the interaction's id
}

// session is a gateway session: what RESUME continues.
type session struct {
	id       string
	intents  int
	compress bool
	seq      int64
	log      []frame
	conn     *conn // nil while disconnected
	ended    bool  // closed normally or invalidated: cannot be resumed
}

// frame is one websocket message to write.
type frame struct {
	seq         int64
	data        []byte
	interaction string
	compress    bool
}

// conn is one gateway websocket.
type conn struct {
	s    *Server
	ws   *websocket.Conn
	sess *session // guarded by Server.mu

	mu       sync.Mutex
	queue    []frame
	compress bool
	wake     chan struct{}
	done     chan struct{}
	once     sync.Once
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// serveGateway runs one websocket: HELLO, then the client's ops until the
// socket ends.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if isClosed(s.closed) {
		s.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(2) // this reader and its writer
	s.mu.Unlock()
	defer s.wg.Done()
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.wg.Done()
		return
	}
	c := &conn{s: s, ws: ws, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go c.writeLoop()
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.connCount++
	closing := isClosed(s.closed)
	s.mu.Unlock()
	defer s.disconnect(c)
	if closing { // Close ran during the handshake and did not see c
		return
	}

	q := r.URL.Query()
	if v := q.Get("v"); v != "" && v != "9" && v != "10" {
		c.closeWith(4012, "Invalid API version.")
		return
	}
	if enc := q.Get("encoding"); enc != "" && enc != "json" {
		c.closeWith(4002, "Error while decoding payload.")
		return
	}
	s.mu.Lock()
	silent := s.noHello > 0
	if silent {
		s.noHello--
	}
	s.mu.Unlock()
	if silent { // a gateway that hangs after the upgrade
		c.readLoop()
		return
	}
	hello, _ := json.Marshal(map[string]any{"op": 10, "s": nil, "t": nil, "d": map[string]int64{"heartbeat_interval": s.opts.HeartbeatInterval.Milliseconds()}})
	c.enqueue(frame{data: hello})
	c.readLoop()
}

// payload is a client → server gateway message.
type payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
}

func (c *conn) readLoop() {
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseGoingAway) {
				c.s.endSession(c)
			}
			return
		}
		var p payload
		if json.Unmarshal(data, &p) != nil {
			c.closeWith(4002, "Error while decoding payload.")
			return
		}
		if !c.handle(p) {
			return
		}
	}
}

// handle answers one op and reports whether the socket stays open.
func (c *conn) handle(p payload) bool {
	s := c.s
	switch p.Op {
	case 1: // heartbeat
		s.mu.Lock()
		s.heartbeats++
		ack := !s.noAcks
		s.mu.Unlock()
		if ack {
			c.enqueue(frame{data: []byte(`{"op":11,"s":null,"t":null,"d":null}`)})
		}
		return true
	case 2:
		return c.identify(p.D)
	case 6:
		return c.resume(p.D)
	case 3, 4, 8: // presence, voice state, request members: accepted, ignored
		s.mu.Lock()
		authed := c.sess != nil
		s.mu.Unlock()
		if !authed {
			c.closeWith(4003, "Not authenticated.")
		}
		return authed
	default:
		c.closeWith(4001, "Unknown opcode.")
		return false
	}
}

func (s *Server) tokenOK(t string) bool {
	return strings.TrimPrefix(t, "Bot ") == s.opts.Token
}

func (c *conn) identify(raw json.RawMessage) bool {
	s := c.s
	var id struct {
		Token      string            `json:"token"`
		Intents    *int              `json:"intents"`
		Compress   bool              `json:"compress"`
		Properties map[string]string `json:"properties"`
	}
	if json.Unmarshal(raw, &id) != nil || id.Intents == nil {
		c.closeWith(4002, "Error while decoding payload.")
		return false
	}
	if !s.tokenOK(id.Token) {
		c.closeWith(4004, "Authentication failed.")
		return false
	}
	if *id.Intents < 0 || *id.Intents >= 1<<26 {
		c.closeWith(4013, "Invalid intent(s).")
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.sess != nil {
		c.closeWith(4005, "Already authenticated.") // takes no lock of the server's
		return false
	}
	sess := &session{id: newSessionID(), intents: *id.Intents, compress: s.opts.Compress && id.Compress, conn: c}
	s.sessions[sess.id] = sess
	c.sess = sess
	c.setCompress(sess.compress)
	s.identifies = append(s.identifies, Identify{
		SessionID: sess.id, Intents: sess.intents, Compress: id.Compress, Properties: id.Properties, At: time.Now(),
	})
	s.sendLocked(sess, event{t: "READY", d: map[string]any{
		"v": 9, "user": s.Bot(), "guilds": []any{}, "private_channels": []any{},
		"session_id": sess.id, "resume_gateway_url": s.GatewayURL(), "session_type": "normal",
		"application": map[string]any{"id": s.opts.AppID, "flags": 0},
	}})
	for _, e := range s.backlog {
		s.sendLocked(sess, e)
	}
	s.backlog = nil
	return true
}

func (c *conn) resume(raw json.RawMessage) bool {
	s := c.s
	var r struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	if json.Unmarshal(raw, &r) != nil {
		c.closeWith(4002, "Error while decoding payload.")
		return false
	}
	if !s.tokenOK(r.Token) {
		c.closeWith(4004, "Authentication failed.")
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[r.SessionID]
	ok = ok && !sess.ended && r.Seq <= sess.seq && (len(sess.log) == 0 || r.Seq >= sess.log[0].seq-1)
	rec := Resume{SessionID: r.SessionID, Seq: r.Seq, OK: ok}
	if !ok {
		s.resumes = append(s.resumes, rec)
		c.enqueue(frame{data: []byte(`{"op":9,"s":null,"t":null,"d":false}`)})
		return true
	}
	if old := sess.conn; old != nil && old != c {
		old.sess = nil
		old.drop()
	}
	sess.conn, c.sess = c, sess
	c.setCompress(sess.compress)
	for _, f := range sess.log {
		if f.seq > r.Seq {
			c.enqueue(f)
			rec.Replayed++
		}
	}
	s.resumes = append(s.resumes, rec)
	sess.seq++
	c.enqueue(frame{seq: sess.seq, data: []byte(`{"op":0,"s":` + strconv.FormatInt(sess.seq, 10) + `,"t":"RESUMED","d":{}}`)})
	return true
}

// disconnect forgets a socket that ended; its session stays resumable
// unless ended.
func (s *Server) disconnect(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	if c.sess != nil && c.sess.conn == c {
		c.sess.conn = nil
	}
	s.mu.Unlock()
	c.drop()
}

// endSession ends the session of a socket the client closed normally
// (1000, 1001): Discord invalidates it.
func (s *Server) endSession(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.sess != nil {
		c.sess.ended = true
	}
}

func (c *conn) setCompress(on bool) {
	c.mu.Lock()
	c.compress = on
	c.mu.Unlock()
}

// enqueue queues f for the writer; it never blocks.
func (c *conn) enqueue(f frame) {
	c.mu.Lock()
	f.compress = c.compress
	c.queue = append(c.queue, f)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes queued frames in order until the socket ends.
func (c *conn) writeLoop() {
	defer c.s.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		c.mu.Lock()
		q := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, f := range q {
			kind, data := websocket.TextMessage, f.data
			if f.compress {
				kind, data = websocket.BinaryMessage, deflate(data)
			}
			if f.interaction != "" {
				// Before the write: the client may answer before it returns.
				c.s.markDispatched(f.interaction)
			}
			_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if err := c.ws.WriteMessage(kind, data); err != nil {
				c.drop()
				return
			}
		}
	}
}

func deflate(p []byte) []byte {
	var b bytes.Buffer
	z := zlib.NewWriter(&b)
	_, _ = z.Write(p)
	_ = z.Close()
	return b.Bytes()
}

// closeWith sends a close frame with a gateway close code, then drops the
// socket.
func (c *conn) closeWith(code int, text string) {
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
	c.drop()
}

// drop closes the socket at once, without a close frame.
func (c *conn) drop() {
	c.once.Do(func() { close(c.done) })
	_ = c.ws.NetConn().Close()
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// liveLocked returns the open sockets.
func (s *Server) liveLocked() []*conn {
	return slices.Collect(maps.Keys(s.conns))
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
