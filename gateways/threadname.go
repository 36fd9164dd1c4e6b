package gateways

import (
	"strings"
	"unicode/utf8"
)

// ThreadName names a thread or topic after its first message: the first
// line of text, at most limit characters (cut with "…"), "incident" when
// that is empty.
func ThreadName(text string, limit int) string {
	name, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > limit {
		name = string([]rune(name)[:max(limit-1, 0)]) + "…"
	}
	if name == "" {
		return "incident"
	}
	return name
}
