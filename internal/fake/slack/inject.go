package slack

import (
	"encoding/json"
	"strings"
)

// InjectDM sends a message.im event: user wrote text to the bot in their
// direct-message channel (DMChannel(user)). It returns the message's ts.
func (s *Server) InjectDM(user, text string) string {
	return s.InjectMessage(Event{Channel: DMChannel(user), ChannelType: "im", User: user, Text: text})
}

// InjectMention sends an app_mention event: user mentioned the bot in
// channel, in the thread threadTS when not "". The text gets the mention
// "<@BOTUSERID> " in front unless it already has one, as Slack writes it.
// It returns the message's ts.
func (s *Server) InjectMention(channel, user, text, threadTS string) string {
	mention := "<@" + s.opts.BotUserID + ">"
	if !strings.Contains(text, mention) {
		text = mention + " " + text
	}
	return s.InjectMessage(Event{Type: "app_mention", Channel: channel, User: user, Text: text, ThreadTS: threadTS})
}

// InjectMessage sends ev in an events_api envelope (payload type
// event_callback) and returns its ts. Bot messages, edits and other
// variants are ev's BotID, Subtype and Extra fields.
func (s *Server) InjectMessage(ev Event) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queueEventLocked(ev)
}

// queueEventLocked queues ev and returns its ts.
func (s *Server) queueEventLocked(ev Event) string {
	payload, eventID, ts := s.eventCallbackLocked(ev)
	s.queueEnvelopeLocked("events_api", payload, false, eventID)
	return ts
}

// InjectBlockAction sends a button press in an interactive envelope
// (payload type block_actions, with a response_url of the fake) and returns
// the envelope id.
func (s *Server) InjectBlockAction(a BlockAction) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queueEnvelopeLocked("interactive", s.blockActionLocked(a), false, "")
}

// InjectSlashCommand sends a slash command in a slash_commands envelope
// (accepts_response_payload true, with a response_url of the fake) and
// returns the envelope id.
func (s *Server) InjectSlashCommand(c SlashCommand) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	payload, _ := json.Marshal(s.slashCommandLocked(c))
	return s.queueEnvelopeLocked("slash_commands", payload, true, "")
}
