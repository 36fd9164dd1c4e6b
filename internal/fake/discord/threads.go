package discord

import (
	"net/http"
	"slices"
	"time"
	"unicode/utf8"
)

// RouteStartThread starts a thread from a message (discordgo's
// MessageThreadStart, MessageThreadStartComplex); RouteGetChannel reads a
// channel (discordgo's Channel).
const (
	RouteStartThread = "POST /channels/{channel}/messages/{message}/threads"
	RouteGetChannel  = "GET /channels/{channel}"
)

// Thread records a thread started from a message: as on Discord, its id
// is the message's, and it is a channel of its own (type 11, a public
// thread) in the parent's guild.
type Thread struct {
	ID, ParentID, GuildID, Name string
	AutoArchive                 int // minutes
	At                          time.Time
}

// GuildChannel makes channel a text channel of guild, as if a message
// had been seen there: the bot may post in it and start threads from its
// messages before anyone wrote in it.
func (s *Server) GuildChannel(channel, guild string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[channel] = guild
}

// Threads returns the threads started from messages, in order.
func (s *Server) Threads() []Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.threads)
}

// startThread answers POST /channels/{c}/messages/{m}/threads: the
// message must be in that guild channel (10008, 50024 in a DM) and have no
// thread yet (160004); the name is 1 to 100 characters; the archive
// duration, when given, one of 60, 1440, 4320, 10080.
func (s *Server) startThread(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name                string `json:"name"`
		AutoArchiveDuration int    `json:"auto_archive_duration"`
	}
	if e := decode(r, &req); e != nil {
		writeAPIError(w, e)
		return
	}
	if n := utf8.RuneCountInString(req.Name); n < 1 || n > 100 {
		writeAPIError(w, formError("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.", "name"))
		return
	}
	if d := req.AutoArchiveDuration; d != 0 && d != 60 && d != 1440 && d != 4320 && d != 10080 {
		writeAPIError(w, formError("BASE_TYPE_CHOICES", "Value must be one of {60, 1440, 4320, 10080}.", "auto_archive_duration"))
		return
	}
	channel, id := r.PathValue("channel"), r.PathValue("message")
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	switch {
	case !ok || m.ChannelID != channel:
		writeAPIError(w, errUnknownMessage)
		return
	case s.channels[channel] == "":
		writeAPIError(w, &apiError{status: http.StatusBadRequest, code: 50024, message: "Cannot execute action on this channel type"})
		return
	case slices.ContainsFunc(s.threads, func(t Thread) bool { return t.ID == id }):
		writeAPIError(w, &apiError{status: http.StatusBadRequest, code: 160004, message: "A thread has already been created for this message"})
		return
	}
	t := Thread{ID: id, ParentID: channel, GuildID: s.channels[channel], Name: req.Name, AutoArchive: req.AutoArchiveDuration, At: time.Now()}
	if t.AutoArchive == 0 {
		t.AutoArchive = 4320
	}
	s.threads = append(s.threads, t)
	s.channels[t.ID] = t.GuildID
	writeJSON(w, http.StatusCreated, s.threadObject(t))
}

// threadObject is t as Discord's channel object (type 11, a public thread).
func (s *Server) threadObject(t Thread) map[string]any {
	return map[string]any{
		"id": t.ID, "type": 11, "guild_id": t.GuildID, "parent_id": t.ParentID, "name": t.Name,
		"owner_id": s.opts.BotID, "last_message_id": nil, "message_count": 0, "member_count": 1, "rate_limit_per_user": 0,
		"thread_metadata": map[string]any{"archived": false, "auto_archive_duration": t.AutoArchive, "locked": false,
			"archive_timestamp": t.At.UTC().Format(time.RFC3339Nano)},
		"total_message_sent": 0,
	}
}

// getChannel answers GET /channels/{c}: a thread the bot started (with
// its parent_id), a guild text channel, a DM, or 10003 Unknown Channel.
func (s *Server) getChannel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("channel")
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.threads, func(t Thread) bool { return t.ID == id }); i >= 0 {
		writeJSON(w, http.StatusOK, s.threadObject(s.threads[i]))
		return
	}
	guild, ok := s.channels[id]
	switch {
	case !ok:
		writeAPIError(w, &apiError{status: http.StatusNotFound, code: 10003, message: "Unknown Channel"})
	case guild == "":
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "type": 1, "last_message_id": nil})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "type": 0, "guild_id": guild, "name": "channel-" + id, "position": 0, "parent_id": nil})
	}
}
