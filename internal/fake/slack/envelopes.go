package slack

import (
	"encoding/json"
	"fmt"
	"time"
)

// Connections returns how many Socket Mode connections were accepted so
// far: one more than the first means the client reconnected.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.count
}

// Live returns how many Socket Mode connections are open now.
func (s *Server) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.socket.conns)
}

// Pongs returns how many answers to its websocket PINGs the fake received.
func (s *Server) Pongs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.pongs
}

// Envelopes returns the envelopes written to connections, in order.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Envelope(nil), s.socket.envelopes...)
}

// Acks returns the acknowledgements received, in order.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ack(nil), s.socket.acks...)
}

// AckDelays returns, for each envelope acknowledged so far, how long after
// it was written its first acknowledgement arrived.
func (s *Server) AckDelays() map[string]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]time.Duration)
	for _, a := range s.socket.acks {
		if _, known := s.socket.sent[a.EnvelopeID]; !known {
			continue
		}
		if _, seen := out[a.EnvelopeID]; !seen {
			out[a.EnvelopeID] = a.Delay
		}
	}
	return out
}

// Unacknowledged returns the ids of the envelopes written that have no
// acknowledgement that arrived within d of the envelope; an envelope
// written less than d ago and not yet acknowledged counts too. Empty means
// every envelope so far was acknowledged in time.
func (s *Server) Unacknowledged(d time.Duration) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	acked := make(map[string]bool)
	for _, a := range s.socket.acks {
		if _, ok := s.socket.sent[a.EnvelopeID]; ok && a.Delay <= d {
			acked[a.EnvelopeID] = true
		}
	}
	var out []string
	for _, e := range s.socket.envelopes {
		if !acked[e.ID] {
			out = append(out, e.ID)
		}
	}
	return out
}

// queueEnvelopeLocked queues an envelope and returns its id.
func (s *Server) queueEnvelopeLocked(typ string, payload []byte, acceptsResponse bool, eventID string) string {
	return s.queueAttemptLocked(typ, payload, acceptsResponse, eventID, 0)
}

func (s *Server) queueAttemptLocked(typ string, payload []byte, acceptsResponse bool, eventID string, attempt int) string {
	id := fmt.Sprintf("%08d-fake-env-%s", s.nextLocked(), typ)
	reason := ""
	if attempt > 0 {
		reason = "timeout"
	}
	raw, _ := json.Marshal(map[string]any{
		"envelope_id": id, "type": typ, "payload": json.RawMessage(payload),
		"accepts_response_payload": acceptsResponse, "retry_attempt": attempt, "retry_reason": reason,
	})
	env := &Envelope{ID: id, Type: typ, EventID: eventID, Attempt: attempt, payload: payload}
	s.dispatchLocked(frame{raw: raw, env: env})
	return id
}

// Redeliver sends again, as Slack retries them, the events_api envelopes
// written so far that have no acknowledgement and were not sent again yet:
// the same event in a new envelope with retry_attempt one higher and
// retry_reason "timeout". Like Slack it gives up on an event after three
// retries. It returns the new envelope ids.
func (s *Server) Redeliver() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	acked := make(map[string]bool)
	for _, a := range s.socket.acks {
		acked[a.EnvelopeID] = true
	}
	var out []string
	for i, e := range s.socket.envelopes {
		if e.Type != "events_api" || acked[e.ID] || e.retried || e.Attempt >= maxRetries {
			continue
		}
		s.socket.envelopes[i].retried = true
		out = append(out, s.queueAttemptLocked(e.Type, e.payload, false, e.EventID, e.Attempt+1))
	}
	return out
}

func (s *Server) recordAck(data []byte) {
	var ack struct {
		EnvelopeID string          `json:"envelope_id"`
		Payload    json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
		return
	}
	now := time.Now()
	a := Ack{EnvelopeID: ack.EnvelopeID, Payload: ack.Payload, At: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.socket.sent[ack.EnvelopeID]; ok {
		a.Delay = now.Sub(s.socket.envelopes[i].Sent)
	}
	s.socket.acks = append(s.socket.acks, a)
}
