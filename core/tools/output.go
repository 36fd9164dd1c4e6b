package tools

import (
	"strconv"
	"unicode/utf8"
)

// Truncate returns s cut to at most max bytes, ending on a UTF-8 boundary
// with a "…[truncated N bytes]" marker that counts the bytes left out. The
// marker is included in max; s itself is returned when it fits.
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	// The marker for the largest possible count is never shorter than the
	// final one, so keeping max-len(marker) bytes always fits.
	keep := max - len(truncMarker(len(s)))
	if keep < 0 {
		keep = 0
	}
	keep = runeStart(s, keep)
	return s[:keep] + truncMarker(len(s)-keep)
}

// truncMarker says how many bytes were cut.
func truncMarker(n int) string {
	return "…[truncated " + strconv.Itoa(n) + " bytes]"
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in, so
// s[:i] does not end in half a character.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// cappedBuffer is an io.Writer that keeps the first max bytes written and
// counts the rest, so a chatty process cannot fill memory.
type cappedBuffer struct {
	max     int
	buf     []byte
	dropped int
}

// Write keeps what fits and never fails.
func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.max - len(b.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	b.dropped += len(p) - max(room, 0)
	return len(p), nil
}

// String returns what was kept, with a truncation marker if bytes were
// dropped. The kept part ends on a UTF-8 boundary.
func (b *cappedBuffer) String() string {
	if b.dropped == 0 {
		return string(b.buf)
	}
	keep := completeRunes(b.buf)
	return string(b.buf[:keep]) + truncMarker(len(b.buf)-keep+b.dropped)
}

// completeRunes returns the length of b without a trailing, incomplete
// UTF-8 sequence.
func completeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}
