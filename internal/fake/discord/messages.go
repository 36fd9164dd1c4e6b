package discord

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// MaxContent is the longest message content, in characters (runes).
const MaxContent = 2000

// stored is a message the fake knows: injected or sent by the bot.
type stored struct {
	Sent
	author       User
	mentions     []User
	mentionRoles []string
	everyone     bool
	attachments  []Attachment
	member       *Member
	embeds       bool
	edited       time.Time
}

// body is a message payload as create, edit, callback and webhook routes
// take it; the *Set fields tell a present field from an absent one.
type body struct {
	content         string
	contentSet      bool
	components      []Component
	componentsSet   bool
	reference       *Reference
	allowedMentions *AllowedMentions
	flags           int
	embeds          bool
	files           []uploadedFile // multipart files[n] (createMessage)
}

// parseBody decodes and checks a message payload.
func parseBody(raw map[string]json.RawMessage) (body, *apiError) {
	var b body
	if v, ok := raw["content"]; ok && string(v) != "null" {
		if json.Unmarshal(v, &b.content) != nil {
			return b, formError("STRING_TYPE_CONVERT", "Could not interpret value as string.", "content")
		}
		b.contentSet = true
	} else if ok {
		b.contentSet = true // null clears
	}
	if utf8.RuneCountInString(b.content) > MaxContent {
		return b, formError("BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.", "content")
	}
	if v, ok := raw["components"]; ok && string(v) != "null" {
		if json.Unmarshal(v, &b.components) != nil {
			return b, formError("LIST_TYPE_CONVERT", "Must be an array.", "components")
		}
		if b.components == nil {
			b.components = []Component{}
		}
		b.componentsSet = true
		if e := checkComponents(b.components); e != nil {
			return b, e
		}
	}
	if v, ok := raw["message_reference"]; ok && string(v) != "null" {
		b.reference = new(Reference)
		if json.Unmarshal(v, b.reference) != nil {
			return b, formError("MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType.", "message_reference")
		}
	}
	if v, ok := raw["allowed_mentions"]; ok && string(v) != "null" {
		b.allowedMentions = new(AllowedMentions)
		if json.Unmarshal(v, b.allowedMentions) != nil {
			return b, formError("MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType.", "allowed_mentions")
		}
		if e := checkAllowedMentions(b.allowedMentions); e != nil {
			return b, e
		}
	}
	if v, ok := raw["flags"]; ok && string(v) != "null" {
		if json.Unmarshal(v, &b.flags) != nil {
			return b, formError("NUMBER_TYPE_COERCE", "Value is not int.", "flags")
		}
	}
	if v, ok := raw["embeds"]; ok {
		var embeds []json.RawMessage
		_ = json.Unmarshal(v, &embeds)
		b.embeds = len(embeds) > 0
	}
	return b, nil
}

func checkAllowedMentions(a *AllowedMentions) *apiError {
	for i, p := range a.Parse {
		if p != "users" && p != "roles" && p != "everyone" {
			return formError("ENUM_TYPE_COERCE", "Value must be one of ('roles', 'users', 'everyone').", "allowed_mentions", "parse", strconv.Itoa(i))
		}
	}
	if slices.Contains(a.Parse, "users") && len(a.Users) > 0 {
		return formError("MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE", `parse:["users"] and users: [ids...] are mutually exclusive.`, "allowed_mentions")
	}
	if slices.Contains(a.Parse, "roles") && len(a.Roles) > 0 {
		return formError("MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE", `parse:["roles"] and roles: [ids...] are mutually exclusive.`, "allowed_mentions")
	}
	return nil
}

// readBody decodes a JSON object body and parses it as a message payload.
func readBody(r *http.Request) (body, *apiError) {
	var raw map[string]json.RawMessage
	if e := decode(r, &raw); e != nil {
		return body{}, e
	}
	return parseBody(raw)
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request) {
	b, e := readMessage(r)
	if e == nil && len(b.files) > 0 && s.refuse.Load() {
		e = &apiError{status: http.StatusRequestEntityTooLarge, code: 40005, message: "Request entity too large"}
	}
	if e != nil {
		writeAPIError(w, e)
		return
	}
	channel := r.PathValue("channel")
	s.mu.Lock()
	obj, e := s.createLocked(channel, b, ViaChannel, "")
	s.mu.Unlock()
	if e != nil {
		writeAPIError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

// createLocked checks and stores a bot message, echoes it on the gateway
// and returns its message object.
func (s *Server) createLocked(channel string, b body, via, interaction string) (map[string]any, *apiError) {
	if b.content == "" && len(b.components) == 0 && !b.embeds && len(b.files) == 0 {
		return nil, errEmptyMessage
	}
	if ref := b.reference; ref != nil && ref.MessageID != "" {
		target, ok := s.messages[ref.MessageID]
		known := ok && target.ChannelID == channel && (ref.ChannelID == "" || ref.ChannelID == channel)
		if !known && (ref.FailIfNotExists == nil || *ref.FailIfNotExists) {
			return nil, formError("REPLIES_UNKNOWN_MESSAGE", "Unknown message", "message_reference")
		}
		if !known {
			b.reference = nil
		}
	}
	m := &stored{
		Sent: Sent{
			ID: s.newIDLocked(), ChannelID: channel, GuildID: s.channels[channel], Content: b.content,
			Reference: b.reference, Components: b.components, AllowedMentions: b.allowedMentions,
			Flags: b.flags, Via: via, Interaction: interaction, At: time.Now(),
		},
		author: s.Bot(),
		embeds: b.embeds,
	}
	m.mentions, m.mentionRoles, m.everyone = detectMentions(m.Content, s.users)
	m.attachments = s.storeFilesLocked(m.Sent, b.files)
	s.messages[m.ID] = m
	s.sent = append(s.sent, m.Sent)
	obj := s.objectLocked(m, true)
	if !s.opts.NoEcho && m.Flags&FlagEphemeral == 0 {
		s.dispatchLocked(s.messageEventLocked(m, obj))
	}
	return obj, nil
}

func (s *Server) editMessage(w http.ResponseWriter, r *http.Request) {
	b, e := readBody(r)
	if e != nil {
		writeAPIError(w, e)
		return
	}
	s.mu.Lock()
	m, ok := s.messages[r.PathValue("message")]
	switch {
	case !ok || m.ChannelID != r.PathValue("channel"):
		e = errUnknownMessage
	case m.author.ID != s.opts.BotID:
		e = errNotAuthor
	}
	var obj map[string]any
	if e == nil {
		obj, e = s.editLocked(m, b, ViaChannel, "")
	}
	s.mu.Unlock()
	if e != nil {
		writeAPIError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

// editLocked applies b to m, records the edit and returns the message
// object.
func (s *Server) editLocked(m *stored, b body, via, interaction string) (map[string]any, *apiError) {
	next := *m
	if b.contentSet {
		next.Content = b.content
	}
	if b.componentsSet {
		next.Components = b.components
	}
	if b.allowedMentions != nil {
		next.AllowedMentions = b.allowedMentions
	}
	if next.Content == "" && len(next.Components) == 0 && !next.embeds && !b.embeds {
		return nil, errEmptyMessage
	}
	next.edited = time.Now()
	*m = next
	s.edits = append(s.edits, Edit{
		ChannelID: m.ChannelID, MessageID: m.ID, Content: m.Content, Components: m.Components,
		ContentSet: b.contentSet, ComponentsSet: b.componentsSet, Via: via, Interaction: interaction, At: m.edited,
	})
	return s.objectLocked(m, true), nil
}

func (s *Server) startTyping(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.typing = append(s.typing, Typing{ChannelID: r.PathValue("channel"), At: time.Now()})
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) me(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Bot())
}

// createDM answers POST /users/@me/channels: the DM channel with
// recipient_id, the same one every time.
func (s *Server) createDM(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RecipientID string `json:"recipient_id"`
	}
	if e := decode(r, &req); e != nil {
		writeAPIError(w, e)
		return
	}
	if req.RecipientID == "" {
		writeAPIError(w, formError("BASE_TYPE_REQUIRED", "This field is required", "recipient_id"))
		return
	}
	s.mu.Lock()
	id := s.dmChannelLocked(req.RecipientID)
	u, ok := s.users[req.RecipientID]
	s.mu.Unlock()
	if !ok {
		u = User{ID: req.RecipientID, Username: "user" + req.RecipientID, Discriminator: "0"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "type": 1, "recipients": []User{u}, "last_message_id": nil})
}

// dmChannelLocked returns the DM channel with user, making one up the
// first time.
func (s *Server) dmChannelLocked(user string) string {
	if id, ok := s.dms[user]; ok {
		return id
	}
	id := s.newIDLocked()
	s.dms[user] = id
	s.channels[id] = ""
	return id
}

// DMChannel returns the id of the DM channel between the bot and user, the
// one POST /users/@me/channels answers and InjectMessage may use.
func (s *Server) DMChannel(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dmChannelLocked(user)
}

func (s *Server) gateway(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"url": s.GatewayURL()})
}

func (s *Server) gatewayBot(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"url": s.GatewayURL(), "shards": 1,
		"session_start_limit": map[string]int{"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1},
	})
}

// objectLocked renders m as Discord's message object; withRef adds the
// referenced message one level deep.
func (s *Server) objectLocked(m *stored, withRef bool) map[string]any {
	o := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "author": m.author, "content": m.Content,
		"timestamp": m.At.UTC().Format(time.RFC3339Nano), "edited_timestamp": nil,
		"tts": false, "mention_everyone": m.everyone, "mentions": orEmpty(m.mentions),
		"mention_roles": orEmpty(m.mentionRoles), "attachments": orEmpty(m.attachments),
		"embeds": []any{}, "components": orEmpty(m.Components), "pinned": false, "type": 0, "flags": m.Flags,
	}
	if !m.edited.IsZero() {
		o["edited_timestamp"] = m.edited.UTC().Format(time.RFC3339Nano)
	}
	if m.GuildID != "" {
		o["guild_id"] = m.GuildID
		if m.member != nil {
			o["member"] = m.member
		}
	}
	if m.Interaction != "" {
		o["application_id"] = s.opts.AppID
		o["webhook_id"] = s.opts.AppID
	}
	if ref := m.Reference; ref != nil && ref.MessageID != "" {
		o["type"] = 19
		full := *ref
		if target, ok := s.messages[ref.MessageID]; ok {
			full.ChannelID, full.GuildID = target.ChannelID, target.GuildID
			if withRef {
				o["referenced_message"] = s.objectLocked(target, false)
			}
		} else if withRef {
			o["referenced_message"] = nil
		}
		full.FailIfNotExists = nil
		o["message_reference"] = full
	}
	return o
}

func orEmpty[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// Sent returns every message the bot created, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// Messages returns the messages the bot created in channel, in order.
func (s *Server) Messages(channel string) []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Sent
	for _, m := range s.sent {
		if m.ChannelID == channel {
			out = append(out, m)
		}
	}
	return out
}

// Message returns the current state (after edits) of a message the fake
// knows, injected or sent, or false.
func (s *Server) Message(id string) (Sent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	if !ok {
		return Sent{}, false
	}
	return m.Sent, true
}

// Edits returns the accepted edits of messages, in order.
func (s *Server) Edits() []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.edits)
}

// Typing returns the typing indicators started, in order.
func (s *Server) Typing() []Typing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.typing)
}
