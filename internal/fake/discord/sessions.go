package discord

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// dispatchLocked sends e to every session that can still be resumed, or
// keeps it (the last maxReplay) for the first session to identify when
// there is none.
func (s *Server) dispatchLocked(e event) {
	sent := false
	for _, sess := range s.sessions {
		if !sess.ended {
			s.sendLocked(sess, e)
			sent = true
		}
	}
	if !sent {
		s.backlog = append(s.backlog, e)
		if len(s.backlog) > maxReplay {
			s.backlog = slices.Delete(s.backlog, 0, len(s.backlog)-maxReplay)
		}
	}
}

// sendLocked numbers e for sess, keeps it for RESUME and writes it when
// the session is connected.
func (s *Server) sendLocked(sess *session, e event) {
	if e.intent != 0 && sess.intents&e.intent == 0 {
		return
	}
	d := e.raw
	if d == nil {
		v := e.d
		if e.privileged && sess.intents&IntentMessageContent == 0 {
			v = blankContent(v)
		}
		d, _ = json.Marshal(v)
	}
	sess.seq++
	var b bytes.Buffer
	b.WriteString(`{"op":0,"s":`)
	b.WriteString(strconv.FormatInt(sess.seq, 10))
	b.WriteString(`,"t":`)
	t, _ := json.Marshal(e.t)
	b.Write(t)
	b.WriteString(`,"d":`)
	b.Write(d)
	b.WriteString(`}`)
	f := frame{seq: sess.seq, data: b.Bytes(), interaction: e.interaction}
	sess.log = append(sess.log, f)
	if len(sess.log) > maxReplay {
		sess.log = slices.Delete(sess.log, 0, len(sess.log)-maxReplay)
	}
	if sess.conn != nil {
		sess.conn.enqueue(f)
	}
}

// blankContent is what a bot without the Message Content intent sees of
// a guild message that does not mention it.
func blankContent(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	m = maps.Clone(m)
	m["content"], m["embeds"], m["attachments"], m["components"] = "", []any{}, []any{}, []any{}
	return m
}

// DropConnection closes every gateway socket abruptly (no close frame),
// as a network failure would; sessions stay resumable.
func (s *Server) DropConnection() {
	s.mu.Lock()
	conns := s.liveLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.drop()
	}
}

// SendReconnect sends op 7 RECONNECT on every socket.
func (s *Server) SendReconnect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.liveLocked() {
		c.enqueue(frame{data: []byte(`{"op":7,"s":null,"t":null,"d":null}`)})
	}
}

// SendInvalidSession sends op 9 INVALID_SESSION on every identified
// socket; the client must identify again. Unless resumable, the sessions
// end (their missed dispatches are lost, as on Discord).
func (s *Server) SendInvalidSession(resumable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.liveLocked() {
		if c.sess == nil {
			continue
		}
		c.sess.conn = nil
		c.sess.ended = c.sess.ended || !resumable
		c.sess = nil
		c.enqueue(frame{data: []byte(`{"op":9,"s":null,"t":null,"d":` + strconv.FormatBool(resumable) + `}`)})
	}
}

// SetHeartbeatAcks turns heartbeat ACKs (op 11) on (the default) or off.
func (s *Server) SetHeartbeatAcks(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noAcks = !on
}

// WithholdHello makes the next n gateway sockets opened silent: the
// websocket upgrade succeeds and then nothing is sent (no HELLO), as from
// a gateway that hangs. A client only gets past one by closing it.
func (s *Server) WithholdHello(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noHello = n
}

// Heartbeats returns how many heartbeats (op 1) arrived.
func (s *Server) Heartbeats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heartbeats
}

// Connections returns how many gateway sockets were opened so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connCount
}

// Connected returns how many gateway sockets are open with a session
// (identified or resumed).
func (s *Server) Connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if c.sess != nil {
			n++
		}
	}
	return n
}

// Identifies returns the accepted IDENTIFYs, in order.
func (s *Server) Identifies() []Identify {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.identifies)
}

// Resumes returns the RESUMEs received, in order.
func (s *Server) Resumes() []Resume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.resumes)
}

// InjectDispatch dispatches event t with d written verbatim as the
// payload's "d" (it need not be valid JSON: a malformed frame); it reaches
// every session whatever its intents.
func (s *Server) InjectDispatch(t string, d []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dispatchLocked(event{t: t, raw: slices.Clone(d)})
}
