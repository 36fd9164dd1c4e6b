package telegram

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// InjectMessage queues an update carrying m and returns its update id.
// MessageID and Date are filled in when zero.
func (s *Server) InjectMessage(m Message) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepareMessage(&m)
	raw, _ := json.Marshal(struct {
		Message Message `json:"message"`
	}{m})
	return s.queueLocked(raw)
}

// InjectUpdate queues a raw update and returns its update id. raw should be
// a JSON object (its update_id is set by the fake); anything else is
// queued as {"update_id":N,"junk":"<raw>"}.
func (s *Server) InjectUpdate(raw string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queueLocked([]byte(raw))
}

// InjectCallback queues a callback query (a button press) and returns its
// update id; the query's id is CallbackQueryID(update id).
func (s *Server) InjectCallback(c Callback) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	from := c.From
	msg := Message{MessageID: c.MessageID, From: ptr(s.Bot()), Chat: s.chatLocked(c.ChatID), Date: time.Now().Unix()}
	if stored, ok := s.messages[msgKey{c.ChatID, c.MessageID}]; ok {
		msg.Text = stored.Plain
		if stored.Thread != 0 { // a message in a forum topic
			msg.Extra = map[string]json.RawMessage{"message_thread_id": json.RawMessage(strconv.Itoa(stored.Thread)), "is_topic_message": json.RawMessage("true")}
		}
	}
	id := s.nextUpd
	q := map[string]any{
		"id": CallbackQueryID(id), "from": from, "message": msg,
		"chat_instance": strconv.FormatInt(c.ChatID, 10), "data": c.Data,
	}
	s.queries[CallbackQueryID(id)] = time.Now()
	raw, _ := json.Marshal(map[string]any{"callback_query": q})
	return s.queueLocked(raw)
}

// CallbackQueryID is the id of the callback query injected as update id.
func CallbackQueryID(updateID int) string { return "cq" + strconv.Itoa(updateID) }

// Polls returns the getUpdates requests received so far, in order.
func (s *Server) Polls() []Poll {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Poll(nil), s.polls...)
}

// Pending returns how many updates are not yet confirmed by an offset.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// queueLocked stamps raw with the next update id and wakes long polls.
func (s *Server) queueLocked(raw []byte) int {
	id := s.nextUpd
	s.nextUpd++
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		junk, _ := json.Marshal(string(raw))
		fields = map[string]json.RawMessage{"junk": junk}
	}
	fields["update_id"] = json.RawMessage(strconv.Itoa(id))
	stamped, _ := json.Marshal(fields)
	s.updates = append(s.updates, update{id: id, raw: stamped})
	close(s.arrived)
	s.arrived = make(chan struct{})
	return id
}

func (s *Server) prepareMessage(m *Message) {
	if m.Chat.Type == "" {
		m.Chat.Type = s.chatLocked(m.Chat.ID).Type
	}
	if _, forum := s.forums[m.Chat.ID]; forum {
		m.Chat.IsForum = true
	}
	s.chats[m.Chat.ID] = m.Chat
	if m.MessageID == 0 {
		m.MessageID = s.newMessageIDLocked(m.Chat.ID)
	}
	if m.Date == 0 {
		m.Date = time.Now().Unix()
	}
	text := m.Text + m.Caption
	s.messages[msgKey{m.Chat.ID, m.MessageID}] = &Sent{ChatID: m.Chat.ID, MessageID: m.MessageID, Text: text, Plain: text}
	if m.Entities == nil && m.Text != "" {
		m.Entities = detectEntities(m.Text)
	}
	if m.CaptionEntities == nil && m.Caption != "" {
		m.CaptionEntities = detectEntities(m.Caption)
	}
}

// chatLocked returns the known chat, or guesses its type from the id's sign.
func (s *Server) chatLocked(id int64) Chat {
	if c, ok := s.chats[id]; ok {
		return c
	}
	if id < 0 {
		return Chat{ID: id, Type: "supergroup", Title: "group " + strconv.FormatInt(id, 10)}
	}
	return Chat{ID: id, Type: "private"}
}

func (s *Server) newMessageIDLocked(chat int64) int {
	s.nextMsg[chat]++
	return s.nextMsg[chat]
}

// getUpdates confirms updates below offset, then answers the rest or holds
// the request until one arrives or the timeout ends.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p params) {
	poll := Poll{Offset: p.int("offset"), Timeout: p.int("timeout"), Limit: p.int("limit")}
	s.mu.Lock()
	s.polls = append(s.polls, poll)
	hooked := s.webhook.URL != ""
	s.mu.Unlock()
	if hooked {
		writeError(w, http.StatusConflict, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", 0)
		return
	}
	wait := min(time.Duration(poll.Timeout)*time.Second, s.opts.MaxPollWait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		batch, arrived := s.take(poll)
		if len(batch) > 0 || poll.Timeout <= 0 || s.opts.AnswerAtOnce {
			writeResult(w, batch)
			return
		}
		select {
		case <-arrived:
		case <-timer.C:
			writeResult(w, []json.RawMessage{})
			return
		case <-r.Context().Done():
			return
		case <-s.closed:
			writeResult(w, []json.RawMessage{})
			return
		}
	}
}

// take drops confirmed updates and returns the ones to answer, with the
// channel that signals the next arrival.
func (s *Server) take(poll Poll) ([]json.RawMessage, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if poll.Offset > 0 {
		kept := s.updates[:0]
		for _, u := range s.updates {
			if u.id >= poll.Offset {
				kept = append(kept, u)
			}
		}
		s.updates = kept
	}
	pending := s.updates
	if poll.Offset < 0 && -poll.Offset < len(pending) {
		pending = pending[len(pending)+poll.Offset:]
	}
	limit := poll.Limit
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	out := make([]json.RawMessage, 0, min(limit, len(pending)))
	for _, u := range pending[:min(limit, len(pending))] {
		out = append(out, u.raw)
	}
	return out, s.arrived
}

func ptr[T any](v T) *T { return &v }
