package slack

import (
	"regexp"
	"strings"
	"sync"
)

// Slack's mrkdwn is not Markdown: bold is *x*, italics _x_, strikes ~x~,
// links <url|text>, and &, < and > must be escaped, since <…> is markup
// (<!channel>, <@U123>). The model writes Markdown; toMrkdwn converts what
// it can and escapes the rest, so that no text becomes a mention or a link
// it did not ask for.

// md returns the Markdown patterns, compiled on first use rather than at
// every start of the bot, Slack or not.
var md = sync.OnceValue(func() *mdPatterns {
	return &mdPatterns{
		link:    regexp.MustCompile(`\[([^\]\n]+)\]\(([^()\s]+)\)`),
		bold:    regexp.MustCompile(`\*\*([^*\n]+?)\*\*`),
		boldU:   regexp.MustCompile(`__([^_\n]+?)__`),
		italic:  regexp.MustCompile(`(^|[^*\w])\*([^*\s](?:[^*\n]*[^*\s])?)\*($|[^*\w])`),
		strike:  regexp.MustCompile(`~~([^~\n]+?)~~`),
		heading: regexp.MustCompile(`^#{1,6}[ \t]+(.+?)[ \t#]*$`),
		bullet:  regexp.MustCompile(`^([ \t]*)[-*+][ \t]+`),
	}
})

// mdPatterns are the Markdown constructs toMrkdwn converts.
type mdPatterns struct {
	link, bold, boldU, italic, strike, heading, bullet *regexp.Regexp
}

// escapeMrkdwn escapes the three characters Slack reserves.
func escapeMrkdwn(s string) string {
	return mrkdwnEscaper.Replace(s)
}

var mrkdwnEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escapedLen is the length of escapeMrkdwn(s) in characters; it is
// additive, so it can measure splits.
func escapedLen(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case '&':
			n += 5
		case '<', '>':
			n += 4
		default:
			n++
		}
	}
	return n
}

// toMrkdwn converts Markdown to Slack mrkdwn: code fences kept (without
// their language), inline code kept, **bold** and __bold__ → *bold*,
// *italic* → _italic_, ~~strike~~ → ~strike~, headings bold, bullets •,
// [text](http…) → <url|text>; everything else escaped, so "<!channel>"
// written by the model stays text.
func toMrkdwn(md string) string {
	lines := strings.Split(md, "\n")
	fence := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
			rest := strings.TrimPrefix(strings.TrimSpace(line), "```")
			if !fence {
				// "```go" opens a block; Slack would print the language.
				lines[i] = indent + "```"
				if strings.HasSuffix(rest, "```") && len(rest) >= 3 { // a one-line block
					lines[i] = indent + "```" + escapeMrkdwn(strings.TrimSuffix(rest, "```")) + "```"
					continue
				}
				if strings.ContainsAny(rest, " \t") { // not a language: text after the fence
					lines[i] += escapeMrkdwn(rest)
				}
			} else {
				lines[i] = indent + "```" + escapeMrkdwn(rest)
			}
			fence = !fence
			continue
		}
		if fence {
			lines[i] = escapeMrkdwn(line)
			continue
		}
		lines[i] = lineToMrkdwn(line)
	}
	return strings.Join(lines, "\n")
}

// lineToMrkdwn converts one line outside code blocks.
func lineToMrkdwn(line string) string {
	heading := false
	if m := md().heading.FindStringSubmatch(line); m != nil {
		line, heading = m[1], true
	}
	line = md().bullet.ReplaceAllString(line, "$1• ")
	var b strings.Builder
	// Inline code spans (odd parts) are only escaped.
	parts := strings.Split(line, "`")
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('`')
		}
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString(escapeMrkdwn(p))
			continue
		}
		b.WriteString(textToMrkdwn(p))
	}
	if heading && strings.TrimSpace(b.String()) != "" {
		return "*" + b.String() + "*"
	}
	return b.String()
}

// textToMrkdwn converts a stretch of text without code: links, then the
// emphasis of the text between them.
func textToMrkdwn(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range md().link.FindAllStringSubmatchIndex(s, -1) {
		text, target := s[m[2]:m[3]], s[m[4]:m[5]]
		if !linkable(target) {
			continue
		}
		target = lowerScheme(target)
		b.WriteString(emphasis(s[last:m[0]]))
		label := escapeMrkdwn(strings.ReplaceAll(text, "|", "¦"))
		b.WriteString("<" + escapeMrkdwn(strings.ReplaceAll(target, "|", "%7C")) + "|" + label + ">")
		last = m[1]
	}
	b.WriteString(emphasis(s[last:]))
	return b.String()
}

// linkable reports whether target may become a link: web and mail
// addresses only (never Slack's own <!…> or <@…> forms).
func linkable(target string) bool {
	t := strings.ToLower(target)
	return strings.HasPrefix(t, "https://") || strings.HasPrefix(t, "http://") || strings.HasPrefix(t, "mailto:")
}

// lowerScheme writes a linkable target's scheme in lower case ("HTTPS:"
// and "mAilto:" are the same schemes to a browser, not always to Slack).
func lowerScheme(target string) string {
	i := strings.IndexByte(target, ':')
	return strings.ToLower(target[:i]) + target[i:]
}

// emphasis escapes s and converts its emphasis markers.
func emphasis(s string) string {
	s = escapeMrkdwn(s)
	s = md().italic.ReplaceAllString(s, "${1}_${2}_${3}")
	s = md().bold.ReplaceAllString(s, "*$1*")
	s = md().boldU.ReplaceAllString(s, "*$1*")
	return md().strike.ReplaceAllString(s, "~$1~")
}
