package telegram

import (
	"sort"
	"strings"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// addressed reports whether a message is for the bot: a command, a mention
// of the bot (@username or a text mention), or a reply to the bot's
// message. It returns the text with the bot's mentions removed, and other
// = true for a command addressed to another bot ("/start@OtherBot").
func (g *Gateway) addressed(m *tgbotapi.Message, text string, entities []tgbotapi.MessageEntity) (ok bool, stripped string, other bool) {
	self := g.bot.Self
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.ID == self.ID {
		ok = true
	}
	if spans := g.mentionSpans(text, entities); len(spans) > 0 { // offsets of the original text
		ok = true
		text = cutSpans(text, spans)
	}
	if cmd, target, isCmd := commandTarget(text); isCmd {
		if target != "" && !strings.EqualFold(target, self.UserName) {
			return false, text, true
		}
		ok = true
		text = strings.Replace(text, cmd, strings.TrimSuffix(cmd, "@"+target), 1)
	}
	return ok, strings.TrimSpace(text), false
}

// commandTarget splits a leading "/command@bot": the command token and the
// bot it names ("" when none).
func commandTarget(text string) (cmd, target string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	cmd, _, _ = strings.Cut(text, " ")
	cmd, _, _ = strings.Cut(cmd, "\n")
	_, target, _ = strings.Cut(cmd, "@")
	return cmd, target, len(cmd) > 1
}

// span is a byte range of a text.
type span struct{ start, end int }

// mentionSpans finds the bot's mentions: "mention" entities naming it,
// "text_mention" entities of its user, or, without entities, "@username"
// in the text.
func (g *Gateway) mentionSpans(text string, entities []tgbotapi.MessageEntity) []span {
	self := g.bot.Self
	handle := "@" + self.UserName
	var out []span
	for _, e := range entities {
		s, ok := utf16Span(text, e.Offset, e.Length)
		if !ok {
			continue
		}
		switch {
		case e.Type == "mention" && strings.EqualFold(text[s.start:s.end], handle):
			out = append(out, s)
		case e.Type == "text_mention" && e.User != nil && e.User.ID == self.ID:
			out = append(out, s)
		}
	}
	if len(entities) == 0 && self.UserName != "" {
		out = findHandles(text, handle)
	}
	return out
}

// findHandles finds handle in text, case-insensitively, not inside a word.
func findHandles(text, handle string) []span {
	var out []span
	lower, h := strings.ToLower(text), strings.ToLower(handle)
	for from := 0; ; {
		i := strings.Index(lower[from:], h)
		if i < 0 {
			return out
		}
		start, end := from+i, from+i+len(h)
		if (start == 0 || !isWord(text[start-1])) && (end == len(text) || !isWord(text[end])) {
			out = append(out, span{start, end})
		}
		from = end
	}
}

func isWord(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// cutSpans removes the spans from text (with one adjoining space each).
func cutSpans(text string, spans []span) string {
	// sort.Slice: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.Slice(spans, func(i, j int) bool { return spans[j].start < spans[i].start })
	for _, s := range spans {
		if s.start < 0 || s.end > len(text) || s.start > s.end {
			continue
		}
		end := s.end
		if end < len(text) && text[end] == ' ' {
			end++
		} else if s.start > 0 && text[s.start-1] == ' ' {
			s.start--
		}
		text = text[:s.start] + text[end:]
	}
	return text
}

// utf16Span converts an entity's UTF-16 offset and length to bytes.
func utf16Span(text string, off, n int) (span, bool) {
	units, start := 0, -1
	for i, r := range text {
		if units == off {
			start = i
		}
		if units == off+n && start >= 0 {
			return span{start, i}, true
		}
		units += len(utf16.Encode([]rune{r}))
	}
	if units == off+n && start >= 0 {
		return span{start, len(text)}, true
	}
	return span{}, false
}
