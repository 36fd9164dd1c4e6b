package pairing

import (
	"fmt"
	"io"
	"strings"
)

// Alphabet is the characters of a pairing code: capital letters and
// digits without the ones read one for another (0 O, 1 I L).
const Alphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// CodeLen is the length of a pairing code.
const CodeLen = 8

// maxCodeArg bounds what ParseCode reads of a /pair argument.
const maxCodeArg = 64

// NewCode draws a code of CodeLen characters of Alphabet, each uniform
// (bytes past the last whole multiple of the alphabet are drawn again).
func NewCode(r io.Reader) (string, error) {
	limit := byte(256 - 256%len(Alphabet))
	out := make([]byte, 0, CodeLen)
	buf := make([]byte, 2*CodeLen)
	for len(out) < CodeLen {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("pairing: draw a code: %w", err)
		}
		for _, b := range buf {
			if b < limit && len(out) < CodeLen {
				out = append(out, Alphabet[int(b)%len(Alphabet)])
			}
		}
	}
	return string(out), nil
}

// ParseCode reads a code as an approver types it: any letter case, with
// spaces or dashes between its characters ("k7qm-x9p2"). It reports false
// for anything else, a character outside Alphabet included.
func ParseCode(arg string) (string, bool) {
	if len(arg) > maxCodeArg {
		return "", false
	}
	var b strings.Builder
	for _, r := range arg {
		switch {
		case r == ' ' || r == '-' || r == '\t':
			continue
		case r >= 'a' && r <= 'z':
			r -= 'a' - 'A'
		}
		if r > 0x7f || !strings.ContainsRune(Alphabet, r) || b.Len() == CodeLen {
			return "", false
		}
		b.WriteRune(r)
	}
	if b.Len() != CodeLen {
		return "", false
	}
	return b.String(), true
}
