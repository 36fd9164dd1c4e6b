package telegram

import (
	"unicode/utf16"
	"unicode/utf8"
)

// detectEntities finds what Telegram marks up by itself in a message's
// text: "@username" mentions and "/command[@bot]" commands, each at the
// start of the text or after whitespace. Offsets count UTF-16 units.
func detectEntities(text string) []Entity {
	var out []Entity
	units := 0 // UTF-16 offset of text[i]
	prevSpace := true
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if prevSpace && (r == '@' || r == '/') {
			if n := tokenLen(text[i+1:], r == '/'); n > 0 {
				kind := "mention"
				if r == '/' {
					kind = "bot_command"
				}
				out = append(out, Entity{Type: kind, Offset: units, Length: 1 + n})
				units += 1 + n // tokens are ASCII
				i += 1 + n
				prevSpace = false
				continue
			}
		}
		prevSpace = r == ' ' || r == '\n' || r == '\t'
		units += len(utf16.Encode([]rune{r}))
		i += size
	}
	return out
}

// tokenLen returns the length of the username or command name at the
// start of s (letters, digits, underscores; a command may carry "@bot").
func tokenLen(s string, command bool) int {
	n := wordLen(s)
	if n == 0 {
		return 0
	}
	if command && n < len(s) && s[n] == '@' {
		if m := wordLen(s[n+1:]); m > 0 {
			n += 1 + m
		}
	}
	return n
}

func wordLen(s string) int {
	n := 0
	for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9') {
		n++
	}
	return n
}
