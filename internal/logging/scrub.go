package logging

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// withheld replaces a JSON line whose secret could not be removed without
// breaking the JSON (a secret outside any string, e.g. a number).
const withheld = `{"level":"error","message":"log line withheld: it contained a secret"}`

// scrubber removes secrets from each JSON line written through it. Secrets
// are masked inside JSON strings after unescaping them, so an escaped
// secret is caught and the line stays valid JSON.
type scrubber struct {
	out     io.Writer
	secrets *secrets.Set
}

// Write scrubs p line by line and writes the result in one call. It reports
// len(p) on success, as callers expect of a filter.
func (s *scrubber) Write(p []byte) (int, error) {
	var b strings.Builder
	for rest := string(p); rest != ""; {
		line, tail, nl := strings.Cut(rest, "\n")
		b.WriteString(s.line(line))
		if nl {
			b.WriteByte('\n')
		}
		rest = tail
	}
	if _, err := io.WriteString(s.out, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// line scrubs one line.
func (s *scrubber) line(text string) string {
	if !s.secrets.Leaks(text) && !strings.Contains(text, `\`) {
		return text // nothing raw, nothing escaped: the common case
	}
	out := redactStrings(text, s.secrets)
	if !s.secrets.Leaks(out) {
		return out
	}
	// Left outside any string, or across strings: mask the raw text.
	redacted := s.secrets.Redact(out)
	if json.Valid([]byte(text)) && !json.Valid([]byte(redacted)) {
		return withheld
	}
	return redacted
}

// redactStrings masks secrets inside each JSON string literal of text,
// keys included, re-encoding only the literals it changes.
func redactStrings(text string, set *secrets.Set) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '"' {
			continue
		}
		end := literalEnd(text, i)
		if end < 0 {
			break
		}
		if clean, ok := redactLiteral(text[i:end], set); ok {
			b.WriteString(text[last:i])
			b.WriteString(clean)
			last = end
		}
		i = end - 1
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// literalEnd returns the index just past the string literal starting at
// text[start] (a quote), or -1 when it is not closed.
func literalEnd(text string, start int) int {
	for i := start + 1; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// redactLiteral returns the literal re-encoded with its secrets masked, and
// whether it changed.
func redactLiteral(lit string, set *secrets.Set) (string, bool) {
	s := lit[1 : len(lit)-1]
	if strings.Contains(s, `\`) {
		if json.Unmarshal([]byte(lit), &s) != nil {
			return lit, false
		}
	}
	clean := set.Redact(s)
	if clean == s {
		return lit, false
	}
	return quoteJSON(clean), true
}

// quoteJSON encodes s as a JSON string without HTML escaping.
func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
