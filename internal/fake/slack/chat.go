package slack

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/internal/fake/arrival"
)

// Posts returns the chat.postMessage calls Slack accepted for channel, in
// order; channel "" returns every channel's.
func (s *Server) Posts(channel string) []Post {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Post
	for _, p := range s.posts {
		if channel == "" || p.Channel == channel {
			out = append(out, p)
		}
	}
	return out
}

// Updates returns the chat.update calls Slack accepted, in order.
func (s *Server) Updates() []Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Update(nil), s.updates...)
}

// Ephemerals returns the chat.postEphemeral calls Slack accepted, in order.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephemerals...)
}

// Message returns the current state of a message the bot posted (after
// updates), or false.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[msgKey{channel, ts}]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// checkMessage returns Slack's error for a message's text and blocks, or
// "". A new message (not an update) must have some content.
func checkMessage(p params, isNew bool) string {
	switch {
	case utf8.RuneCountInString(p["text"]) > MaxText:
		return "msg_too_long"
	case p.has("blocks") && !checkBlocks(p["blocks"]):
		return "invalid_blocks"
	case isNew && !hasContent(p):
		return "no_text"
	}
	return ""
}

// hasContent reports whether a message has text, blocks or attachments.
func hasContent(p params) bool {
	return p["text"] != "" || len(blockList(p["blocks"])) > 0 || p["attachments"] != "" && p["attachments"] != "[]"
}

// blockList returns the blocks of raw, nil when none or malformed.
func blockList(raw string) []json.RawMessage {
	var blocks []json.RawMessage
	_ = json.Unmarshal([]byte(raw), &blocks)
	return blocks
}

// rawBlocks returns the blocks argument as JSON, nil when absent.
func rawBlocks(p params) json.RawMessage {
	if !p.has("blocks") {
		return nil
	}
	return json.RawMessage(p["blocks"])
}

// wireMessage is the message object Slack returns for a bot's post.
func (s *Server) wireMessage(m Message) map[string]any {
	out := map[string]any{
		"type": "message", "user": s.opts.BotUserID, "bot_id": s.opts.BotID,
		"app_id": s.opts.AppID, "team": s.opts.TeamID, "text": m.Text, "ts": m.TS,
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = m.Blocks
	}
	return out
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request, p params) {
	ch := p["channel"]
	if ch == "" {
		writeError(w, "channel_not_found")
		return
	}
	if e := checkMessage(p, true); e != "" {
		writeError(w, e)
		return
	}
	s.mu.Lock()
	ts := s.tsLocked()
	post := Post{
		Channel: ch, TS: ts, Text: p["text"], Blocks: rawBlocks(p),
		ThreadTS: p["thread_ts"], Mrkdwn: p["mrkdwn"], At: arrival.Of(r),
	}
	s.posts = append(s.posts, post)
	m := &Message{Channel: ch, TS: ts, Text: post.Text, Blocks: post.Blocks, ThreadTS: post.ThreadTS}
	s.messages[msgKey{ch, ts}] = m
	wire := s.wireMessage(*m)
	if s.opts.EchoPosts {
		ev := Event{Channel: ch, User: s.opts.BotUserID, BotID: s.opts.BotID, Text: post.Text, TS: ts, ThreadTS: post.ThreadTS}
		s.queueEventLocked(ev)
	}
	s.mu.Unlock()
	writeOK(w, map[string]any{"channel": ch, "ts": ts, "message": wire})
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, p params) {
	if p["channel"] == "" {
		writeError(w, "channel_not_found")
		return
	}
	if e := checkMessage(p, false); e != "" {
		writeError(w, e)
		return
	}
	s.mu.Lock()
	m, ok := s.messages[msgKey{p["channel"], p["ts"]}]
	if !ok {
		s.mu.Unlock()
		writeError(w, "message_not_found")
		return
	}
	up := Update{Channel: m.Channel, TS: m.TS, Text: p["text"], Blocks: rawBlocks(p), Parse: p["parse"], At: arrival.Of(r)}
	s.updates = append(s.updates, up)
	if p.has("text") {
		m.Text = up.Text
	}
	if up.Blocks != nil {
		m.Blocks = up.Blocks
	}
	m.Edits++
	wire := s.wireMessage(*m)
	s.mu.Unlock()
	writeOK(w, map[string]any{"channel": up.Channel, "ts": up.TS, "text": wire["text"], "message": wire})
}

func (s *Server) postEphemeral(w http.ResponseWriter, r *http.Request, p params) {
	switch {
	case p["channel"] == "":
		writeError(w, "channel_not_found")
		return
	case p["user"] == "":
		writeError(w, "user_not_in_channel")
		return
	}
	if e := checkMessage(p, true); e != "" {
		writeError(w, e)
		return
	}
	s.mu.Lock()
	ts := s.tsLocked()
	s.ephemerals = append(s.ephemerals, Ephemeral{
		Channel: p["channel"], User: p["user"], Text: p["text"], Blocks: rawBlocks(p),
		ThreadTS: p["thread_ts"], At: arrival.Of(r),
	})
	s.mu.Unlock()
	writeOK(w, map[string]any{"message_ts": ts})
}
