package slack

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// maxRepliesLimit is the most messages one conversations.replies page
// holds (Slack's maximum, and its default when no limit is given).
const maxRepliesLimit = 1000

// RepliesCall is one conversations.replies call as the fake received it.
type RepliesCall struct {
	Channel, TS, Cursor string
	Limit               string // as sent; "" when absent
}

// RepliesCalls returns the conversations.replies calls that reached the
// handler, in order.
func (s *Server) RepliesCalls() []RepliesCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.replyCalls)
}

// Said records a message someone wrote in a channel's history, as if it
// had been written before, without delivering an event: a message of
// ev.User (or, with ev.BotID, of a bot; ev.User the bot's member id and
// ev.BotID its bot_id for the bot's own) in ev.Channel, in the thread
// ev.ThreadTS when not "". It returns the message's ts. Injected messages
// are recorded the same way; conversations.replies answers from both and
// from the bot's posts.
func (s *Server) Said(ev Event) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.TS == "" {
		ev.TS = s.tsLocked()
	}
	s.recordSaidLocked(ev)
	return ev.TS
}

// recordSaidLocked keeps ev, a message not posted through
// chat.postMessage, in the channel's history (once per channel and ts).
func (s *Server) recordSaidLocked(ev Event) {
	if ev.Subtype != "" || ev.Channel == "" || ev.TS == "" {
		return
	}
	k := msgKey{ev.Channel, ev.TS}
	if _, ok := s.messages[k]; ok {
		return // the bot's own post, echoed
	}
	if _, ok := s.said[k]; !ok {
		s.said[k] = ev
	}
}

// threadLocked returns the wire messages of the thread whose parent is
// ts in channel, parent first, then the replies oldest first; nil when
// there is no such message.
func (s *Server) threadLocked(channel, ts string) []map[string]any {
	type entry struct {
		ts   string
		wire map[string]any
	}
	var all []entry
	parentUser := ""
	for k, m := range s.messages {
		if k.channel == channel && (k.ts == ts || m.ThreadTS == ts) {
			all = append(all, entry{k.ts, s.wireMessage(*m)})
			if k.ts == ts {
				parentUser = s.opts.BotUserID
			}
		}
	}
	for k, ev := range s.said {
		if k.channel != channel || (k.ts != ts && ev.ThreadTS != ts) {
			continue
		}
		w := map[string]any{"type": "message", "text": ev.Text, "ts": ev.TS, "team": s.opts.TeamID}
		if ev.User != "" {
			w["user"] = ev.User
		}
		if ev.BotID != "" {
			w["bot_id"], w["app_id"] = ev.BotID, s.opts.AppID
		}
		if ev.ThreadTS != "" {
			w["thread_ts"] = ev.ThreadTS
		}
		all = append(all, entry{k.ts, w})
		if k.ts == ts {
			parentUser = ev.User
		}
	}
	if !slices.ContainsFunc(all, func(e entry) bool { return e.ts == ts }) {
		return nil
	}
	slices.SortFunc(all, func(a, b entry) int { return compareTS(a.ts, b.ts) })
	out := make([]map[string]any, len(all))
	var users []string
	for i, e := range all {
		out[i] = e.wire
		if e.ts == ts {
			continue
		}
		out[i]["thread_ts"], out[i]["parent_user_id"] = ts, parentUser
		if u, _ := e.wire["user"].(string); u != "" && !slices.Contains(users, u) {
			users = append(users, u)
		}
	}
	if n := len(all) - 1; n > 0 {
		p := out[0] // the parent, as Slack shows it in a thread
		p["thread_ts"], p["reply_count"], p["reply_users_count"] = ts, n, len(users)
		p["reply_users"], p["latest_reply"] = users, all[n].ts
	}
	return out
}

// compareTS orders two Slack timestamps ("1700000000.000100") by time.
func compareTS(a, b string) int {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	ai, _ := strconv.ParseInt(as, 10, 64)
	bi, _ := strconv.ParseInt(bs, 10, 64)
	if ai != bi {
		if ai < bi {
			return -1
		}
		return 1
	}
	return strings.Compare(af, bf)
}

// replies serves conversations.replies: one page of a thread (the parent
// first, then the replies oldest first), at most limit messages (default
// and maximum 1000); the rest is had with the page's next_cursor.
func (s *Server) replies(w http.ResponseWriter, _ *http.Request, p params) {
	s.mu.Lock()
	s.replyCalls = append(s.replyCalls, RepliesCall{Channel: p["channel"], TS: p["ts"], Cursor: p["cursor"], Limit: p["limit"]})
	s.mu.Unlock()
	if p["channel"] == "" {
		writeError(w, "channel_not_found")
		return
	}
	if p["ts"] == "" {
		writeError(w, "invalid_arguments")
		return
	}
	limit := maxRepliesLimit
	if v := p["limit"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, "invalid_limit")
			return
		}
		limit = min(n, maxRepliesLimit)
	}
	from := 0
	if c := p["cursor"]; c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "fake_next:"))
		if err != nil || !strings.HasPrefix(c, "fake_next:") || n < 0 {
			writeError(w, "invalid_cursor")
			return
		}
		from = n
	}
	s.mu.Lock()
	thread := s.threadLocked(p["channel"], p["ts"])
	s.mu.Unlock()
	if thread == nil {
		writeError(w, "thread_not_found")
		return
	}
	from = min(from, len(thread))
	to := min(from+limit, len(thread))
	next := ""
	if to < len(thread) {
		next = "fake_next:" + strconv.Itoa(to)
	}
	writeOK(w, map[string]any{
		"messages": thread[from:to], "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next},
	})
}
