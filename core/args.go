package core

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// CanonicalArgs re-encodes a call's JSON arguments in one form — sorted
// keys, no insignificant space, no escapes that hide text — so that the
// gates, the approval digest and the tool all see the same text: an
// argument written `rm \u002drf` cannot slip past a rule written for
// `rm -rf`. Arguments that are not one valid JSON value are returned as
// they are; the tool runner reports them to the LLM. The Engine applies it
// to every proposed call before any check; `bot policy test` applies it to
// the arguments it is given.
func CanonicalArgs(args string) string {
	if args == "" {
		return args
	}
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return args
	}
	// Only the end of the text may follow the value: dec.More alone lets
	// a stray closing "}" or "]" through, and the value would then be
	// re-encoded without it instead of reported as malformed.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return args
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return args
	}
	return strings.TrimSuffix(b.String(), "\n")
}
