package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// minInnerSecret is the shortest secret, in bytes, whose base64 inner
// parts (see Forms) are redacted: from 12 bytes on an inner part is at
// least 14 characters, which innocent text does not contain by chance.
const minInnerSecret = 12

// base64Alphabets are the encodings whose forms are redacted: standard and
// URL-safe, each unpadded. A padded encoding begins with the unpadded one,
// so masking the unpadded form removes the padded one too (its `=` stay).
var base64Alphabets = []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding}

// Forms returns v and the encoded forms of it that a Set redacts:
//
//   - hex, lower and upper case;
//   - URL encoding as a query (space as +) and as a path segment (space as
//     %20), each with upper- and lower-case percent escapes;
//   - the contents of a JSON string: as encoding/json writes it (<, > and
//     & as \u003c, \u003e, \u0026), without those HTML escapes, and with
//     every non-ASCII character as \uXXXX too (Python's default), for a
//     secret that is valid UTF-8;
//   - base64, standard and URL alphabets, padded or not: v encoded on its
//     own, and, for secrets of at least 12 bytes, the inner part of each of
//     the three byte alignments at which v can sit inside a longer encoded
//     blob — the characters that depend on v's bytes alone (the first and
//     last one or two characters also carry the neighbouring bytes, so they
//     change with what surrounds v and cannot be matched).
//
// Forms equal to v or to each other are listed once.
func Forms(v string) []string {
	forms := []string{v}
	add := func(f string) {
		if f != "" {
			for _, g := range forms {
				if g == f {
					return
				}
			}
			forms = append(forms, f)
		}
	}
	h := hex.EncodeToString([]byte(v))
	add(h)
	add(strings.ToUpper(h))
	for _, u := range []string{url.QueryEscape(v), url.PathEscape(v)} {
		add(u)
		add(lowerPercent(u))
	}
	if utf8.ValidString(v) { // JSON carries no invalid byte
		plain := jsonContents(v, false)
		add(jsonContents(v, true))
		add(plain)
		add(asciiEscapes(plain))
	}
	for _, enc := range base64Alphabets {
		add(enc.EncodeToString([]byte(v)))
		if len(v) >= minInnerSecret {
			for align := range 3 {
				add(innerBase64(enc, v, align))
			}
		}
	}
	return forms
}

// innerBase64 returns the characters of the base64 encoding of a blob in
// which v starts at byte offset align (mod 3) that depend on v's bytes
// only. Character j of an encoding carries bits [6j, 6j+6) of the blob; v
// holds bits [8·align, 8·(align+len(v))).
func innerBase64(enc *base64.Encoding, v string, align int) string {
	blob := make([]byte, align+len(v)+2) // zero neighbours on both sides
	copy(blob[align:], v)
	s := enc.EncodeToString(blob)
	first := (8*align + 5) / 6      // first j with 6j ≥ 8·align
	end := 8 * (align + len(v)) / 6 // one past the last j with 6j+6 ≤ 8·(align+len(v))
	return s[first:end]
}

// jsonContents returns s as the contents of a JSON string (without the
// quotes), as encoding/json writes it; html escapes <, > and & too.
func jsonContents(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string always encodes
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

// asciiEscapes returns JSON string contents with every non-ASCII rune
// written as \uXXXX (a surrogate pair above U+FFFF), lower-case hex.
func asciiEscapes(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, "\\u%04x", u)
		}
	}
	return b.String()
}

// lowerPercent returns a URL-encoded string with its percent escapes in
// lower case (%2f), as some encoders write them.
func lowerPercent(u string) string {
	if !strings.Contains(u, "%") {
		return u
	}
	b := []byte(u)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] = lowerHex(b[i+1])
			b[i+2] = lowerHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// isWord holds the characters of hex and of both base64 alphabets.
var isWord = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_") {
		t[c] = true
	}
	return t
}()

// wordOnly reports whether f is made of word characters only.
func wordOnly(f string) bool {
	for i := 0; i < len(f); i++ {
		if !isWord[f[i]] {
			return false
		}
	}
	return true
}

// longestWordRun returns the length of text's longest run of word
// characters.
func longestWordRun(text string) int {
	best, n := 0, 0
	for i := 0; i < len(text); i++ {
		if isWord[text[i]] {
			n++
			continue
		}
		best, n = max(best, n), 0
	}
	return max(best, n)
}
