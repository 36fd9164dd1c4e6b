package hitl

import (
	"crypto/rand"
	"fmt"
	"io"
	"strings"
)

// TokenAlphabet is the set of characters tokens are made of: digits and upper
// case letters without the look-alikes 0/O and 1/I/L, so a token read off a
// phone screen can be typed back without doubt.
const TokenAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// TokenLength is the number of characters in a token.
const TokenLength = 8

// acceptBelow is the largest multiple of len(TokenAlphabet) that fits in a
// byte: random bytes at or above it are rejected so that every character is
// equally likely.
const acceptBelow = 256 - 256%len(TokenAlphabet)

// NewToken returns a fresh random token from crypto/rand. It is for
// correlation only: authorisation never rests on it.
func NewToken() (string, error) {
	return newTokenFrom(rand.Reader)
}

// newTokenFrom draws a token from r by rejection sampling.
func newTokenFrom(r io.Reader) (string, error) {
	var (
		out [TokenLength]byte
		buf [2 * TokenLength]byte
	)
	n := 0
	for n < TokenLength {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return "", fmt.Errorf("hitl: token: read random: %w", err)
		}
		for _, b := range buf {
			if int(b) >= acceptBelow {
				continue
			}
			out[n] = TokenAlphabet[int(b)%len(TokenAlphabet)]
			if n++; n == TokenLength {
				break
			}
		}
	}
	return string(out[:]), nil
}

// NormalizeToken turns what a person typed into the canonical token:
// case-insensitive, with dashes and spaces removed ("k7q2-mx9p" becomes
// "K7Q2MX9P"). It reports false for anything that is not exactly
// TokenLength characters of TokenAlphabet.
func NormalizeToken(s string) (string, bool) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case isTokenSeparator(r):
			continue
		case r >= 'a' && r <= 'z':
			r -= 'a' - 'A'
		}
		if r > 0x7f || strings.IndexByte(TokenAlphabet, byte(r)) < 0 {
			return "", false
		}
		if b.Len() == TokenLength {
			return "", false
		}
		b.WriteByte(byte(r))
	}
	if b.Len() != TokenLength {
		return "", false
	}
	return b.String(), true
}

// isTokenSeparator reports the characters people put inside a token to make
// it readable: spaces and dashes (including the dashes phone keyboards
// substitute for a hyphen).
func isTokenSeparator(r rune) bool {
	switch r {
	case '-', ' ', '\t', '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u00a0':
		return true
	}
	return false
}
