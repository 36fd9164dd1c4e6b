package slack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// socketPath is where the Socket Mode websocket lives.
const socketPath = "/link/"

// maxRetries is how many times Slack sends an unacknowledged event again.
const maxRetries = 3

// writeWait bounds one websocket write.
const writeWait = 5 * time.Second

// socketState is the Socket Mode side of the Server, guarded by Server.mu.
type socketState struct {
	tickets   map[string]bool // handed out by apps.connections.open, not yet used
	conns     map[int]*wsConn // live connections by id
	count     int             // connections accepted so far
	backlog   []frame         // envelopes waiting for a connection
	envelopes []Envelope      // written, in order
	sent      map[string]int  // envelope id → index in envelopes
	acks      []Ack
	pongs     int
}

func newSocketState() socketState {
	return socketState{tickets: make(map[string]bool), conns: make(map[int]*wsConn), sent: make(map[string]int)}
}

// frame is one text message to write; env is set for envelopes that carry
// an event, an interaction or a command (not hello or disconnect).
type frame struct {
	raw        []byte
	env        *Envelope
	disconnect bool
}

// wsConn is one Socket Mode connection.
type wsConn struct {
	id      int
	ws      *websocket.Conn
	queue   []frame // guarded by Server.mu
	leaving bool    // sent a disconnect: takes no new envelopes; guarded by Server.mu
	wake    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// end closes the connection abruptly (no close frame), once.
func (c *wsConn) end() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

func (c *wsConn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Disconnect sends {"type":"disconnect","reason":"refresh_requested"} on
// every open connection, which then takes no more envelopes; the fake
// closes each DisconnectGrace later, as Slack does.
func (s *Server) Disconnect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.socket.conns {
		raw, _ := json.Marshal(map[string]any{
			"type": "disconnect", "reason": "refresh_requested",
			"debug_info": map[string]any{"host": fmt.Sprintf("applink-fake-%d", c.id)},
		})
		c.leaving = true
		c.queue = append(c.queue, frame{raw: raw, disconnect: true})
		c.poke()
	}
}

// DropConnection closes every open connection abruptly, without a close
// frame, as a network failure would. Envelopes not yet written go to the
// next connection.
func (s *Server) DropConnection() {
	s.mu.Lock()
	conns := s.liveLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.end()
	}
}

// InjectRaw writes frame verbatim (a malformed or unknown envelope) to the
// newest open connection, or the next one.
func (s *Server) InjectRaw(raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dispatchLocked(frame{raw: []byte(raw)})
}

func (s *Server) liveLocked() []*wsConn {
	out := make([]*wsConn, 0, len(s.socket.conns))
	for _, c := range s.socket.conns {
		out = append(out, c)
	}
	return out
}

// targetLocked returns the newest connection taking envelopes, or nil.
func (s *Server) targetLocked() *wsConn {
	var t *wsConn
	for _, c := range s.socket.conns {
		if !c.leaving && (t == nil || c.id > t.id) {
			t = c
		}
	}
	return t
}

// dispatchLocked queues f on the newest connection, or in the backlog.
func (s *Server) dispatchLocked(f frame) {
	if c := s.targetLocked(); c != nil {
		c.queue = append(c.queue, f)
		c.poke()
		return
	}
	s.socket.backlog = append(s.socket.backlog, f)
}

// connectionsOpen hands out a one-time websocket URL.
func (s *Server) connectionsOpen(w http.ResponseWriter, _ *http.Request, _ params) {
	s.mu.Lock()
	ticket := fmt.Sprintf("%08d-fake-ticket", s.nextLocked())
	s.socket.tickets[ticket] = true
	s.mu.Unlock()
	u := "ws" + s.srv.URL[len("http"):] + socketPath + "?ticket=" + ticket + "&app_id=" + s.opts.AppID
	writeOK(w, map[string]any{"url": u})
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// serveSocket accepts a websocket with a ticket from apps.connections.open.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	ok := s.socket.tickets[ticket]
	delete(s.socket.tickets, ticket)
	s.mu.Unlock()
	if !ok {
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade answered the client
	}
	c := &wsConn{ws: ws, wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		_ = ws.Close()
		return
	default:
	}
	s.socket.count++
	c.id = s.socket.count
	c.queue, s.socket.backlog = s.socket.backlog, nil
	s.socket.conns[c.id] = c
	s.wg.Add(2)
	s.mu.Unlock()
	c.poke()
	go s.writeLoop(c)
	go s.readLoop(c)
}

// writeLoop says hello, then writes queued frames and PINGs until the
// connection ends.
func (s *Server) writeLoop(c *wsConn) {
	defer s.wg.Done()
	defer s.dropConn(c)
	var ping, grace <-chan time.Time
	if s.opts.PingInterval > 0 {
		t := time.NewTicker(s.opts.PingInterval)
		defer t.Stop()
		ping = t.C
	}
	s.mu.Lock()
	hello, _ := json.Marshal(map[string]any{
		"type": "hello", "num_connections": len(s.socket.conns),
		"debug_info":      map[string]any{"host": fmt.Sprintf("applink-fake-%d", c.id), "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": s.opts.AppID},
	})
	s.mu.Unlock()
	if s.write(c, hello) != nil {
		return
	}
	for {
		select {
		case <-c.done:
			return
		case <-grace:
			return
		case <-ping:
			if c.ws.WriteControl(websocket.PingMessage, []byte("fake-ping"), time.Now().Add(writeWait)) != nil {
				return
			}
		case <-c.wake:
			for f, ok := s.nextFrame(c); ok; f, ok = s.nextFrame(c) {
				if s.write(c, f.raw) != nil {
					s.unsend(c, f)
					return
				}
				if f.disconnect && grace == nil && s.opts.DisconnectGrace > 0 {
					t := time.NewTimer(s.opts.DisconnectGrace)
					defer t.Stop()
					grace = t.C
				}
			}
		}
	}
}

func (s *Server) write(c *wsConn, raw []byte) error {
	if err := c.ws.SetWriteDeadline(time.Now().Add(writeWait)); err != nil {
		return fmt.Errorf("fake slack: write deadline: %w", err)
	}
	if err := c.ws.WriteMessage(websocket.TextMessage, raw); err != nil {
		return fmt.Errorf("fake slack: write: %w", err)
	}
	return nil
}

// nextFrame pops c's next frame, recording an envelope as written now (before
// the write, so that an ack cannot arrive before the record).
func (s *Server) nextFrame(c *wsConn) (frame, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(c.queue) == 0 {
		return frame{}, false
	}
	f := c.queue[0]
	c.queue = c.queue[1:]
	if f.env != nil {
		e := *f.env
		e.Conn, e.Sent = c.id, time.Now()
		s.socket.sent[e.ID] = len(s.socket.envelopes)
		s.socket.envelopes = append(s.socket.envelopes, e)
	}
	return f, true
}

// unsend takes back a frame whose write failed: it goes first in line again.
func (s *Server) unsend(c *wsConn, f frame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.env != nil {
		if i, ok := s.socket.sent[f.env.ID]; ok && i == len(s.socket.envelopes)-1 {
			s.socket.envelopes = s.socket.envelopes[:i]
			delete(s.socket.sent, f.env.ID)
		}
	}
	c.queue = append([]frame{f}, c.queue...)
}

// dropConn ends c and hands its unwritten envelopes to the newest other
// connection or the backlog.
func (s *Server) dropConn(c *wsConn) {
	c.end()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.socket.conns, c.id)
	for _, f := range c.queue {
		if f.env != nil {
			s.dispatchLocked(f)
		}
	}
	c.queue = nil
}

// readLoop records acknowledgements and pongs until the connection ends.
func (s *Server) readLoop(c *wsConn) {
	defer s.wg.Done()
	defer c.end()
	c.ws.SetPongHandler(func(string) error {
		s.mu.Lock()
		s.socket.pongs++
		s.mu.Unlock()
		return nil
	})
	for {
		typ, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		if typ == websocket.TextMessage {
			s.recordAck(data)
		}
	}
}
