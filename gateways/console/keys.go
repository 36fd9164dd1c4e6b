package console

import (
	"io"
	"strings"
	"unicode/utf8"
)

// The keys keyReader acts on.
const (
	keyEOF       = 0x04 // Ctrl-D: end of input on an empty line
	keyBackspace = 0x08 // Ctrl-H
	keyWordErase = 0x17 // Ctrl-W
	keyLineErase = 0x15 // Ctrl-U
	keyEscape    = 0x1b
	keyDelete    = 0x7f // what the Backspace key sends on most terminals
)

// eraseRune is what erases one character on the screen.
const eraseRune = "\b \b"

// keyReader reads lines from a terminal in key mode (enterKeyMode) and
// edits them as the terminal's own line editing would, without its
// 4,095-byte limit: printable keys are added and echoed, Backspace (DEL
// or Ctrl-H) erases a character, Ctrl-W a word, Ctrl-U the line, Enter
// ends it, and Ctrl-D on an empty line ends the input. Other control keys
// and escape sequences (arrows, function keys) are dropped. A line keeps
// at most MaxLine bytes, like lineReader's; the rest is dropped and not
// echoed. What has been typed of the line is the console's typed, under
// its mu, so that a notice printed meanwhile can show it again.
type keyReader struct {
	c       *Console
	in      io.Reader
	chunk   [4096]byte
	pending []byte // read, not yet edited
	err     error  // the read error to return once pending is edited
	esc     escState
	cut     bool // the line being typed went past MaxLine
}

func newKeyReader(c *Console) *keyReader { return &keyReader{c: c, in: c.in} }

// next returns the next line, and whether it was cut. Ctrl-D on an empty
// line returns io.EOF; a read error returns what was typed with the error.
func (k *keyReader) next() (line string, cut bool, err error) {
	for {
		if line, cut, eof, done := k.edit(); done {
			if eof {
				return "", false, io.EOF
			}
			return line, cut, nil
		}
		if k.err != nil {
			return k.takeLine(), false, k.err
		}
		n, err := k.in.Read(k.chunk[:])
		k.pending, k.err = k.chunk[:n], err
	}
}

// edit applies the keys read so far and echoes them, in one write. done
// reports that a line ended (line, cut) or the input did (eof).
func (k *keyReader) edit() (line string, cut, eof, done bool) {
	c := k.c
	c.mu.Lock()
	defer c.mu.Unlock()
	var echo []byte
	defer func() {
		if len(echo) > 0 {
			c.out.Write(echo) //nolint:errcheck // a closed terminal has no one to tell
		}
	}()
	for len(k.pending) > 0 {
		b := k.pending[0]
		k.pending = k.pending[1:]
		if k.esc.swallow(b) {
			continue
		}
		switch {
		case b == '\r' || b == '\n':
			echo = append(echo, '\n')
			cut = k.cut
			line, k.cut = k.takeLocked(), false
			if cut {
				line = strings.ToValidUTF8(line, "") // the cut may split a character
			}
			return line, cut, false, true
		case b == keyEOF:
			if len(c.typed) == 0 && !k.cut {
				return "", false, true, true
			}
		case b == keyBackspace || b == keyDelete:
			echo = c.eraseLocked(echo, 1, false)
		case b == keyWordErase:
			echo = c.eraseLocked(echo, len(c.typed), true)
		case b == keyLineErase:
			echo = c.eraseLocked(echo, len(c.typed), false)
			k.cut = false
		case b < ' ' && b != '\t':
			// another control key: dropped, as its echo would be junk
		case len(c.typed) >= MaxLine:
			k.cut = true
		default:
			c.typed = append(c.typed, b)
			echo = append(echo, b)
		}
	}
	return "", false, false, false
}

// takeLine returns what was typed of the line and starts a new one.
func (k *keyReader) takeLine() string {
	k.c.mu.Lock()
	defer k.c.mu.Unlock()
	return k.takeLocked()
}

func (k *keyReader) takeLocked() string {
	line := string(k.c.typed)
	k.c.typed = k.c.typed[:0]
	return line
}

// eraseLocked erases up to n characters from the end of the typed line
// (with word, only back to the start of the last word) and appends the
// echo that erases them on the screen.
func (c *Console) eraseLocked(echo []byte, n int, word bool) []byte {
	inWord := false
	for ; n > 0 && len(c.typed) > 0; n-- {
		r, size := utf8.DecodeLastRune(c.typed)
		space := r == ' ' || r == '\t'
		if word && space && inWord {
			break
		}
		inWord = inWord || !space
		c.typed = c.typed[:len(c.typed)-size]
		echo = append(echo, eraseRune...)
	}
	return echo
}

// escState follows an escape sequence a key sent (ESC [ … final, ESC O x,
// ESC x), so that it is dropped whole.
type escState uint8

const (
	escNone  escState = iota
	escStart          // after ESC
	escCSI            // after ESC [
	escSS3            // after ESC O
)

// swallow reports whether b belongs to an escape sequence.
func (e *escState) swallow(b byte) bool {
	switch *e {
	case escStart:
		switch b {
		case '[':
			*e = escCSI
		case 'O':
			*e = escSS3
		case keyEscape:
		default:
			*e = escNone
		}
		return true
	case escCSI:
		if b >= 0x20 && b <= 0x3f { // parameters and intermediates
			return true
		}
		*e = escNone
		return b >= 0x40 && b <= 0x7e // the final byte; anything else ends it unseen
	case escSS3:
		*e = escNone
		return true
	}
	if b == keyEscape {
		*e = escStart
		return true
	}
	return false
}
