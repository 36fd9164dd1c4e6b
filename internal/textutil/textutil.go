// Package textutil holds small text helpers shared by several packages.
package textutil

import "unicode/utf8"

// Shorten cuts s to at most max bytes on a UTF-8 boundary, marking the cut
// with "…" (which adds its own three bytes).
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
