package slack

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DMChannel is the id of the direct-message channel between the bot and
// user ("U123" → "D123").
func DMChannel(user string) string { return "D" + strings.TrimPrefix(user, "U") }

// channelType guesses a channel's type from its id, as Slack's ids go.
func channelType(channel string) string {
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im"
	case strings.HasPrefix(channel, "G"):
		return "group"
	default:
		return "channel"
	}
}

func channelName(channel string) string {
	if channelType(channel) == "im" {
		return "directmessage"
	}
	return "chan-" + strings.ToLower(channel)
}

// eventLocked fills in ev's defaults and returns the event object, its
// event_id and ts.
func (s *Server) eventLocked(ev Event) (map[string]any, string, string) {
	if ev.Type == "" {
		ev.Type = "message"
	}
	if ev.TS == "" {
		ev.TS = s.tsLocked()
	}
	if ev.EventID == "" {
		ev.EventID = fmt.Sprintf("Ev%08dFAKE", s.nextLocked())
	}
	obj := map[string]any{
		"type": ev.Type, "text": ev.Text, "ts": ev.TS, "event_ts": ev.TS,
		"channel": ev.Channel, "team": s.opts.TeamID,
	}
	set := func(k, v string) {
		if v != "" {
			obj[k] = v
		}
	}
	set("user", ev.User)
	set("subtype", ev.Subtype)
	set("bot_id", ev.BotID)
	set("thread_ts", ev.ThreadTS)
	if ev.Type == "message" {
		if ev.ChannelType == "" {
			ev.ChannelType = channelType(ev.Channel)
		}
		obj["channel_type"] = ev.ChannelType
	} else {
		set("channel_type", ev.ChannelType)
	}
	if ev.BotID != "" {
		obj["app_id"] = s.opts.AppID
	} else if ev.Subtype == "" {
		obj["client_msg_id"] = fmt.Sprintf("%08d-fake-4000-8000-000000000000", s.nextLocked())
	}
	for k, v := range ev.Extra {
		obj[k] = v
	}
	s.recordSaidLocked(ev)
	return obj, ev.EventID, ev.TS
}

// eventCallbackLocked returns the event_callback payload carrying ev, with
// its event_id and ts.
func (s *Server) eventCallbackLocked(ev Event) ([]byte, string, string) {
	obj, id, ts := s.eventLocked(ev)
	payload := map[string]any{
		"token": s.opts.VerificationToken, "team_id": s.opts.TeamID, "api_app_id": s.opts.AppID,
		"event": obj, "type": "event_callback", "event_id": id, "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{
			"enterprise_id": nil, "team_id": s.opts.TeamID, "user_id": s.opts.BotUserID,
			"is_bot": true, "is_enterprise_install": false,
		}},
		"is_ext_shared_channel": false,
		"event_context":         "4-fake-" + id,
	}
	raw, _ := json.Marshal(payload)
	return raw, id, ts
}

// triggerLocked returns a new trigger_id.
func (s *Server) triggerLocked() string {
	return fmt.Sprintf("%d.%d.fake%d", s.base, time.Now().UnixNano()%1e9, s.nextLocked())
}

// blockActionLocked returns the block_actions payload for a.
func (s *Server) blockActionLocked(a BlockAction) []byte {
	msg := map[string]any{"type": "message", "user": s.opts.BotUserID, "bot_id": s.opts.BotID, "ts": a.MessageTS, "text": ""}
	label := a.Value
	if m, ok := s.messages[msgKey{a.Channel, a.MessageTS}]; ok {
		msg = s.wireMessage(*m)
		if a.ThreadTS == "" {
			a.ThreadTS = m.ThreadTS
		}
		for _, b := range m.Buttons() {
			if b.ActionID == a.ActionID && b.Value == a.Value && (a.BlockID == "" || a.BlockID == b.BlockID) {
				a.BlockID, label = b.BlockID, b.Text
				break
			}
		}
	}
	container := map[string]any{
		"type": "message", "message_ts": a.MessageTS, "channel_id": a.Channel, "is_ephemeral": false,
	}
	if a.ThreadTS != "" {
		container["thread_ts"] = a.ThreadTS
	}
	payload := map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": a.User, "username": strings.ToLower(a.User), "name": strings.ToLower(a.User), "team_id": s.opts.TeamID},
		"api_app_id": s.opts.AppID, "token": s.opts.VerificationToken,
		"container":  container,
		"trigger_id": s.triggerLocked(),
		"team":       map[string]any{"id": s.opts.TeamID, "domain": s.opts.TeamDomain},
		"enterprise": nil, "is_enterprise_install": false,
		"channel":      map[string]any{"id": a.Channel, "name": channelName(a.Channel)},
		"message":      msg,
		"state":        map[string]any{"values": map[string]any{}},
		"response_url": s.newResponseURLLocked(),
		"actions": []map[string]any{{
			"action_id": a.ActionID, "block_id": a.BlockID, "value": a.Value, "type": "button",
			"text":      map[string]any{"type": "plain_text", "text": label, "emoji": true},
			"action_ts": strconv.FormatFloat(float64(time.Now().UnixMicro())/1e6, 'f', 6, 64),
		}},
	}
	raw, _ := json.Marshal(payload)
	return raw
}

// slashCommandLocked returns the fields of a slash command, as Socket Mode
// sends them in its payload and the HTTP mode as a form.
func (s *Server) slashCommandLocked(c SlashCommand) map[string]string {
	return map[string]string{
		"token": s.opts.VerificationToken, "team_id": s.opts.TeamID, "team_domain": s.opts.TeamDomain,
		"channel_id": c.Channel, "channel_name": channelName(c.Channel),
		"user_id": c.User, "user_name": strings.ToLower(c.User),
		"command": c.Command, "text": c.Text, "api_app_id": s.opts.AppID,
		"is_enterprise_install": "false",
		"response_url":          s.newResponseURLLocked(),
		"trigger_id":            s.triggerLocked(),
	}
}
