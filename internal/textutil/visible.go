package textutil

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The one sanitiser for untrusted text (model output, tool output, remote
// users' words) that people will read. It shows what a terminal or a chat
// app would hide or act on as a visible escape instead:
//
//	\r            carriage return
//	\t            tab (Graphic only: Visible prints tabs)
//	\xHH          any other C0 control, DEL, ESC, and each invalid UTF-8 byte
//	\uHHHH        other escaped runes: C1 controls (U+0080–U+009F), bidi
//	              controls, and in Graphic every format or non-graphic rune
//	\UHHHHHHHH    the same above U+FFFF (Graphic only)
//
// The newline stays as it is. Escaping is unambiguous: a literal backslash
// is written twice, `\\`, whenever what follows it would otherwise read as
// one of the escapes that function writes (or is itself a backslash or an
// escape);
// otherwise it stays single, so `C:\Users\me` and `a\nb` print unchanged
// while the text `\x1b` prints as `\\x1b` and an ESC byte as `\x1b`.

// Visible returns s safe to print on a terminal: C0 controls but the
// newline and the tab, DEL, ESC, C1 controls, bidi controls (U+202E and
// friends, which some terminals apply) and invalid UTF-8 bytes are shown
// escaped, never emitted. Other format characters (the zero-width joiner
// of emoji sequences, tag characters of flags) pass.
func Visible(s string) string { return terminal.escape(s) }

// Graphic returns s as a chat message must show it when people approve
// what it says (approval previews): everything Visible escapes plus the
// tab and every rune that is not graphic or is a format character
// (zero-width characters, line and paragraph separators, tag characters).
func Graphic(s string) string { return chat.escape(s) }

// GraphicLine is Graphic for untrusted text shown as one item of a
// line-per-item list (a file name in a reply): the newline is escaped
// too, as \n, so that the text cannot start a line of its own that reads
// as another item or as the bot's own words.
func GraphicLine(s string) string { return line.escape(s) }

// HasHidden reports whether Graphic would escape a rune or byte of s
// (a doubled backslash does not count).
func HasHidden(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, chatHidden)
}

// GraphicJSON is Graphic for text that is valid JSON (such as indented
// tool arguments): the runes Graphic escapes are written as JSON escapes
// (\t, \r, \uHHHH, surrogate pairs above U+FFFF), and backslashes are left
// as they are, since in valid JSON every backslash already starts an
// escape. Invalid UTF-8 bytes, which JSON cannot carry, show as \xHH.
func GraphicJSON(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, chatHidden) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, 'x', uint32(s[i]), 2)
		case !chatHidden(r):
			b.WriteString(s[i : i+size])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r > 0xFFFF:
			hi, lo := surrogates(r)
			writeHex(&b, 'u', uint32(hi), 4)
			writeHex(&b, 'u', uint32(lo), 4)
		default:
			writeHex(&b, 'u', uint32(r), 4)
		}
		i += size
	}
	return b.String()
}

// terminalHidden reports a rune Visible escapes.
func terminalHidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || (r >= 0x7F && r <= 0x9F):
		return true
	}
	return unicode.Is(unicode.Bidi_Control, r)
}

// chatHidden reports a rune Graphic escapes.
func chatHidden(r rune) bool {
	return r != '\n' && (!unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r))
}

// lineHidden reports a rune GraphicLine escapes.
func lineHidden(r rune) bool { return r == '\n' || chatHidden(r) }

// escaper is one escaping policy: which runes it hides, and whether its
// escapes include \t, \n and \U (which decides which backslashes are
// ambiguous).
type escaper struct {
	hidden            func(rune) bool
	tab, big, newline bool
	// keepBackslashes leaves every backslash single, for text whose
	// backslashes are already escapes.
	keepBackslashes bool
}

var (
	// terminal never escapes a tab, and every rune it escapes is below U+10000.
	terminal        = escaper{hidden: terminalHidden}
	terminalEscaped = escaper{hidden: terminalHidden, keepBackslashes: true}
	chat            = escaper{hidden: chatHidden, tab: true, big: true}
	line            = escaper{hidden: lineHidden, tab: true, big: true, newline: true}
)

// escape writes s with every rune e hides, and every invalid byte, escaped,
// doubling the backslashes that would otherwise be ambiguous.
func (e escaper) escape(s string) string {
	hidden := e.hidden
	if utf8.ValidString(s) && !strings.ContainsFunc(s, hidden) && !strings.Contains(s, `\`) {
		return s // the common case: nothing to do, no allocation
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, 'x', uint32(s[i]), 2)
		case r == '\\':
			b.WriteByte('\\')
			if !e.keepBackslashes && e.ambiguousAfter(s[i+1:]) {
				b.WriteByte('\\')
			}
		case !hidden(r):
			b.WriteString(s[i : i+size])
		default:
			writeEscape(&b, r)
		}
		i += size
	}
	return b.String()
}

// writeEscape writes the escape of one hidden rune.
func writeEscape(b *strings.Builder, r rune) {
	switch {
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\n':
		b.WriteString(`\n`)
	case r < 0x80:
		writeHex(b, 'x', uint32(r), 2)
	case r > 0xFFFF:
		writeHex(b, 'U', uint32(r), 8)
	default:
		writeHex(b, 'u', uint32(r), 4)
	}
}

// ambiguousAfter reports whether a single backslash followed by rest would
// read as something other than a literal backslash: rest starts with a
// backslash, with something e escapes (a hidden rune or an invalid byte,
// whose escape starts with a backslash), or with the body of an escape e
// writes (r, xHH, uHHHH; t, n and UHHHHHHHH where e writes those).
func (e escaper) ambiguousAfter(rest string) bool {
	if rest == "" {
		return false
	}
	r, size := utf8.DecodeRuneInString(rest)
	switch {
	case r == '\\', r == utf8.RuneError && size == 1, e.hidden(r), r == 'r':
		return true
	case r == 't':
		return e.tab
	case r == 'n':
		return e.newline
	case r == 'x':
		return hexRun(rest[1:], 2)
	case r == 'u':
		return hexRun(rest[1:], 4)
	case r == 'U':
		return e.big && hexRun(rest[1:], 8)
	}
	return false
}

// hexRun reports whether s starts with n hexadecimal digits.
func hexRun(s string, n int) bool {
	if len(s) < n {
		return false
	}
	for i := range n {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// writeHex writes `\` kind and v as n lower-case hex digits.
func writeHex(b *strings.Builder, kind byte, v uint32, n int) {
	const digits = "0123456789abcdef"
	b.WriteByte('\\')
	b.WriteByte(kind)
	for shift := 4 * (n - 1); shift >= 0; shift -= 4 {
		b.WriteByte(digits[v>>uint(shift)&0xF])
	}
}

// surrogates returns the UTF-16 surrogate pair of r (> U+FFFF).
func surrogates(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// VisibleEscaped is Visible for text that is already escaped, such as an
// approval request written with Graphic: every control it still holds is
// escaped, but backslashes are left single, so the request's escapes are
// not escaped a second time.
func VisibleEscaped(s string) string { return terminalEscaped.escape(s) }

// Storable returns s as a database that refuses NUL bytes and invalid
// UTF-8 in text (PostgreSQL) can store it: each NUL and each invalid
// byte is written as the chat display shows it (Graphic), \x00 and \xHH;
// every other byte, a backslash included, stays as it is. Text holding
// neither is returned as it is, without allocation.
func Storable(s string) string {
	if !NeedsStorable(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0 || r == utf8.RuneError && size == 1 {
			writeHex(&b, 'x', uint32(s[i]), 2)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// NeedsStorable reports whether Storable would change s: whether s holds
// a NUL byte or invalid UTF-8.
func NeedsStorable(s string) bool {
	return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s)
}
