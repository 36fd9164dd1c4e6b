package auditfmt

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Summary renders a tool call's arguments JSON readably on one line of at
// most max characters: an object as `key=value` pairs in key order (string
// values unquoted), anything else as its text with whitespace collapsed.
// Control and bidi characters never pass through, so the table cannot
// carry terminal escapes from model output.
func Summary(args string, max int) string {
	s := oneLine(objectPairs(args))
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:max-1])) + "…"
}

// objectPairs renders a JSON object as key=value pairs, or returns args
// unchanged when it is not a JSON object.
func objectPairs(args string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return args
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + value(obj[k])
	}
	return strings.Join(pairs, " ")
}

// value renders a JSON value: strings unquoted, the rest compact.
func value(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// oneLine replaces control characters (newlines, tabs, escapes) and bidi
// controls (U+202E and friends, which some terminals apply) with spaces
// and collapses runs of white space.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
