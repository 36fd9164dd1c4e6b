package discord

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"time"
)

var (
	userMention = regexp.MustCompile(`<@!?(\d+)>`)
	roleMention = regexp.MustCompile(`<@&(\d+)>`)
)

// detectMentions finds the users and roles content mentions, and whether it
// mentions everyone (@everyone or @here).
func detectMentions(content string, known map[string]User) ([]User, []string, bool) {
	var users []User
	for _, m := range userMention.FindAllStringSubmatch(content, -1) {
		u, ok := known[m[1]]
		if !ok {
			u = User{ID: m[1], Username: "user" + m[1], Discriminator: "0"}
		}
		if !slices.ContainsFunc(users, func(x User) bool { return x.ID == u.ID }) {
			users = append(users, u)
		}
	}
	var roles []string
	for _, m := range roleMention.FindAllStringSubmatch(content, -1) {
		if !slices.Contains(roles, m[1]) {
			roles = append(roles, m[1])
		}
	}
	everyone := strings.Contains(content, "@everyone") || strings.Contains(content, "@here")
	return users, roles, everyone
}

// InjectMessage stores m and dispatches it as MESSAGE_CREATE; it returns
// the message id. Sessions without the guild (or direct) messages intent do
// not get it; sessions without the Message Content intent get it without
// content unless it is a DM or mentions the bot. With no session yet, it
// waits for the first IDENTIFY. Its attachments' Data is served by the
// fake's CDN at their signed URL (Downloads records the requests).
func (s *Server) InjectMessage(m Message) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.ID == "" {
		m.ID = s.newIDLocked()
	}
	if m.Author.Discriminator == "" {
		m.Author.Discriminator = "0"
	}
	s.users[m.Author.ID] = m.Author
	s.channels[m.ChannelID] = m.GuildID
	st := &stored{
		Sent:         Sent{ID: m.ID, ChannelID: m.ChannelID, GuildID: m.GuildID, Content: m.Content, Flags: m.Flags, At: time.Now()},
		author:       m.Author,
		mentions:     m.Mentions,
		mentionRoles: m.MentionRoles,
	}
	users, roles, everyone := detectMentions(m.Content, s.users)
	if st.mentions == nil {
		st.mentions = users
	}
	if st.mentionRoles == nil {
		st.mentionRoles = roles
	}
	st.everyone = everyone
	if m.ReplyTo != "" {
		st.Reference = &Reference{MessageID: m.ReplyTo}
	}
	if len(m.Attachments) > 0 {
		st.attachments = make([]Attachment, len(m.Attachments))
		for i, a := range m.Attachments {
			st.attachments[i] = s.addAttachmentLocked(m.ChannelID, a)
		}
	}
	if m.GuildID != "" {
		st.member = m.Member
		if st.member == nil {
			st.member = &Member{Roles: []string{}, JoinedAt: joined}
		}
	}
	s.messages[m.ID] = st
	s.dispatchLocked(s.messageEventLocked(st, s.objectLocked(st, true)))
	return m.ID
}

// joined is the joined_at of the members the fake makes up.
const joined = "2024-01-01T00:00:00.000000+00:00"

// messageEventLocked is the MESSAGE_CREATE of a stored message.
func (s *Server) messageEventLocked(m *stored, obj map[string]any) event {
	e := event{t: "MESSAGE_CREATE", d: obj, intent: IntentDirectMessages}
	if m.GuildID != "" {
		e.intent = IntentGuildMessages
		mentioned := slices.ContainsFunc(m.mentions, func(u User) bool { return u.ID == s.opts.BotID })
		e.privileged = !mentioned && m.author.ID != s.opts.BotID
	}
	return e
}

// interaction is an injected interaction's state.
type interaction struct {
	id, token  string
	kind       int // 2 application command, 3 message component
	channelID  string
	guildID    string
	messageID  string // kind 3: the message carrying the component
	dispatched time.Time
	acked      int    // the accepted callback type; 0: none yet
	original   string // the message @original names once acknowledged
}

// InjectButtonPress dispatches INTERACTION_CREATE for a button press (type
// 3) and returns the interaction's id and token. The message it carries is
// the stored message MessageID when the fake knows it.
func (s *Server) InjectButtonPress(p Press) Interaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.newInteractionLocked(3, p.ChannelID, p.GuildID, p.User)
	in.messageID = p.MessageID
	d := s.interactionObjectLocked(in, p.User)
	d["data"] = map[string]any{"custom_id": p.CustomID, "component_type": ComponentButton}
	msg, ok := s.messages[p.MessageID]
	if !ok {
		msg = &stored{Sent: Sent{ID: p.MessageID, ChannelID: p.ChannelID, GuildID: p.GuildID, At: time.Now()}, author: s.Bot()}
	}
	d["message"] = s.objectLocked(msg, false)
	s.dispatchLocked(event{t: "INTERACTION_CREATE", d: d, interaction: in.id})
	return Interaction{ID: in.id, Token: in.token}
}

// InjectSlashCommand dispatches INTERACTION_CREATE for a slash command
// (type 2) and returns the interaction's id and token. data.id is the
// registered command's id (the guild's first, then the global one) when
// there is one.
func (s *Server) InjectSlashCommand(c SlashCommand) Interaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.newInteractionLocked(2, c.ChannelID, c.GuildID, c.User)
	d := s.interactionObjectLocked(in, c.User)
	cmdID := ""
	for _, g := range []string{c.GuildID, ""} {
		if i := slices.IndexFunc(s.commands[g], func(x Command) bool { return x.Name == c.Name }); i >= 0 && cmdID == "" {
			cmdID = s.commands[g][i].ID
		}
	}
	if cmdID == "" {
		cmdID = s.newIDLocked()
	}
	data := map[string]any{"id": cmdID, "name": c.Name, "type": 1}
	if len(c.Options) > 0 {
		data["options"] = c.Options
	}
	if c.GuildID != "" {
		data["guild_id"] = c.GuildID
	}
	d["data"] = data
	s.dispatchLocked(event{t: "INTERACTION_CREATE", d: d, interaction: in.id})
	return Interaction{ID: in.id, Token: in.token}
}

func (s *Server) newInteractionLocked(kind int, channel, guild string, u User) *interaction {
	if u.Discriminator == "" {
		u.Discriminator = "0"
	}
	s.users[u.ID] = u
	if _, ok := s.channels[channel]; !ok {
		s.channels[channel] = guild
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	in := &interaction{id: s.newIDLocked(), token: "aW50ZXJhY3Rpb24" + hex.EncodeToString(b), kind: kind, channelID: channel, guildID: guild}
	s.interacts[in.id] = in
	s.byToken[in.token] = in
	return in
}

// interactionObjectLocked is the common part of an interaction object.
func (s *Server) interactionObjectLocked(in *interaction, u User) map[string]any {
	if u.Discriminator == "" {
		u.Discriminator = "0"
	}
	chanType := 1 // DM
	if in.guildID != "" {
		chanType = 0
	}
	d := map[string]any{
		"id": in.id, "application_id": s.opts.AppID, "type": in.kind, "token": in.token, "version": 1,
		"channel_id": in.channelID, "channel": map[string]any{"id": in.channelID, "type": chanType},
		"locale": "en-US", "app_permissions": "2248473465835073", "entitlements": []any{},
	}
	if in.guildID != "" {
		d["guild_id"] = in.guildID
		d["guild_locale"] = "en-US"
		d["member"] = Member{User: &u, Roles: []string{}, JoinedAt: joined, Permissions: "2248473465835073"}
	} else {
		d["user"] = u
	}
	return d
}

// markDispatched starts an interaction's deadline when its
// INTERACTION_CREATE is first written to a socket.
func (s *Server) markDispatched(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in, ok := s.interacts[id]; ok && in.dispatched.IsZero() {
		in.dispatched = s.now()
	}
}
