package telegram

import (
	"fmt"
	"strconv"
	"strings"
)

// allowedTags are the HTML tags the Bot API accepts.
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "a": true, "code": true, "pre": true,
	"span": true, "tg-spoiler": true, "tg-emoji": true, "blockquote": true,
}

// parseHTML checks text as the Bot API's HTML parse mode does and returns
// the text a user sees, or the "can't parse entities" reason.
func parseHTML(text string) (string, error) {
	var plain strings.Builder
	var stack []string
	for i := 0; i < len(text); {
		switch text[i] {
		case '<':
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("unclosed start tag at byte offset %d", i)
			}
			var err error
			stack, err = applyTag(stack, text[i+1:i+end], i)
			if err != nil {
				return "", err
			}
			i += end + 1
		case '&':
			s, n := decodeEntity(text[i:])
			plain.WriteString(s)
			i += n
		default:
			plain.WriteByte(text[i])
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return plain.String(), nil
}

// applyTag pushes or pops one tag ("b", "/b", `a href="…"`).
func applyTag(stack []string, tag string, at int) ([]string, error) {
	if name, ok := strings.CutPrefix(tag, "/"); ok {
		name = strings.TrimSpace(name)
		if len(stack) == 0 || stack[len(stack)-1] != name {
			return nil, fmt.Errorf("unmatched end tag at byte offset %d, expected %q, found %q", at, top(stack), name)
		}
		return stack[:len(stack)-1], nil
	}
	name, _, _ := strings.Cut(strings.TrimSpace(tag), " ")
	name = strings.ToLower(name)
	if !allowedTags[name] {
		return nil, fmt.Errorf("unsupported start tag %q at byte offset %d", name, at)
	}
	return append(stack, name), nil
}

func top(stack []string) string {
	if len(stack) == 0 {
		return ""
	}
	return "</" + stack[len(stack)-1] + ">"
}

// decodeEntity decodes the HTML entity at the start of s; an unknown one
// stays literal. It returns the text and the bytes consumed.
func decodeEntity(s string) (string, int) {
	end := strings.IndexByte(s, ';')
	if end < 0 || end > 10 {
		return "&", 1
	}
	name := s[1:end]
	switch name {
	case "lt":
		return "<", end + 1
	case "gt":
		return ">", end + 1
	case "amp":
		return "&", end + 1
	case "quot":
		return `"`, end + 1
	}
	if num, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if hex, ok := strings.CutPrefix(strings.ToLower(num), "x"); ok {
			num, base = hex, 16
		}
		if n, err := strconv.ParseInt(num, base, 32); err == nil && n > 0 {
			return string(rune(n)), end + 1
		}
	}
	return "&", 1
}
