package core

import "unicode/utf8"

// Shorten cuts s to at most max bytes on a UTF-8 boundary, marking the cut
// with "…".
func Shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
