package telegram

import (
	"html"
	"strings"
)

// markPunct are the characters a backslash escapes in Markdown.
const markPunct = "\\`*_{}[]()#+-.!~|>"

// emphasis are the delimiters and their tags, longest first.
var emphasis = []struct{ delim, tag string }{
	{"**", "b"}, {"__", "b"}, {"~~", "s"}, {"*", "i"}, {"_", "i"},
}

// renderInline renders one line's inline Markdown as HTML.
func renderInline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if out, n := inlineToken(s, i); n > 0 {
			b.WriteString(out)
			i += n
			continue
		}
		b.WriteString(escape(s[i : i+1]))
		i++
	}
	return b.String()
}

// inlineToken renders the construct starting at s[i], if any, and returns
// it with the bytes it used (0 when none starts there).
func inlineToken(s string, i int) (string, int) {
	switch s[i] {
	case '\\':
		if i+1 < len(s) && strings.IndexByte(markPunct, s[i+1]) >= 0 {
			return escape(s[i+1 : i+2]), 2
		}
	case '`':
		return codeSpan(s, i)
	case '[':
		return link(s, i)
	}
	for _, e := range emphasis {
		if out, n := emphasisSpan(s, i, e.delim, e.tag); n > 0 {
			return out, n
		}
	}
	return "", 0
}

// codeSpan renders `code`; an unmatched backtick run stays literal.
func codeSpan(s string, i int) (string, int) {
	run := s[i:]
	run = run[:len(run)-len(strings.TrimLeft(run, "`"))]
	j := strings.Index(s[i+len(run):], run)
	if j < 0 || strings.TrimSpace(s[i+len(run):i+len(run)+j]) == "" {
		return escape(run), len(run)
	}
	inner := s[i+len(run) : i+len(run)+j]
	return "<code>" + escape(inner) + "</code>", 2*len(run) + j
}

// emphasisSpan renders delim…delim as tag when it opens at s[i].
func emphasisSpan(s string, i int, delim, tag string) (string, int) {
	if !strings.HasPrefix(s[i:], delim) {
		return "", 0
	}
	start := i + len(delim)
	if start >= len(s) || s[start] == ' ' || len(delim) == 1 && s[start] == delim[0] {
		return "", 0
	}
	if delim[0] == '_' && i > 0 && isWord(s[i-1]) {
		return "", 0 // snake_case
	}
	j := closing(s, start, delim)
	if j < 0 || s[j-1] == ' ' {
		return "", 0
	}
	if end := j + len(delim); delim[0] == '_' && end < len(s) && isWord(s[end]) {
		return "", 0
	}
	return "<" + tag + ">" + renderInline(s[start:j]) + "</" + tag + ">", j + len(delim) - i
}

// closing finds the delimiter closing a span opened before s[from],
// skipping code spans and, for a one-character delimiter, doubled ones.
func closing(s string, from int, delim string) int {
	for k := from; k < len(s); k++ {
		switch {
		case s[k] == '`':
			if _, n := codeSpan(s, k); n > 0 {
				k += n - 1
			}
		case len(delim) == 1 && strings.HasPrefix(s[k:], delim+delim):
			k++
		case strings.HasPrefix(s[k:], delim) && k > from:
			return k
		}
	}
	return -1
}

// link renders [text](url) for safe URLs; anything else stays literal.
func link(s string, i int) (string, int) {
	rb := strings.IndexByte(s[i:], ']')
	if rb < 2 || i+rb+1 >= len(s) || s[i+rb+1] != '(' {
		return "", 0
	}
	rest := s[i+rb+2:]
	end := strings.IndexByte(rest, ')')
	if end < 0 {
		return "", 0
	}
	text, target := s[i+1:i+rb], rest[:end]
	if !safeURL(target) {
		return "", 0
	}
	n := rb + 2 + end + 1
	return `<a href="` + html.EscapeString(target) + `">` + renderInline(text) + "</a>", n
}
