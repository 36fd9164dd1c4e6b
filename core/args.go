package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// CanonicalArgs re-encodes a call's JSON arguments in one form — sorted
// keys, no insignificant space, no escapes that hide text — so that the
// gates, the approval digest and the tool all see the same text: an
// argument written `rm \u002drf` cannot slip past a rule written for
// `rm -rf`. Arguments that are not one valid JSON value are returned as
// they are; the tool runner reports them to the LLM. So are arguments that
// give a key twice in one object, at any depth: one form would keep one
// copy (the last, as encoding/json does) and hide the other, which a tool
// or an MCP server may act on; RepeatedKey reports them. The Engine applies
// it to every proposed call before any check, and refuses a call for which
// RepeatedKey reports a key; `bot policy test` does the same with the
// arguments it is given.
func CanonicalArgs(args string) string {
	if args == "" || RepeatedKey(args) != nil {
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

// RepeatedKey reports the first key given twice in one object of the JSON
// text args, at any depth, naming the key and the object's path, e.g.
// `key "A" given twice in the object at env; give each key once`. Text
// that is not valid JSON is no concern of it (nil): the tool's schema check
// refuses it. The Engine checks every proposed call's raw arguments with it
// before anything else, since a decoder keeps only the last copy and a
// policy rule would judge a call the tool may not run.
func RepeatedKey(args string) error {
	// One entry per open object or array: its path, an object's keys seen
	// so far (nil for an array), and the next element's index or key.
	type level struct {
		path string
		keys map[string]bool
		next int    // an array's next index
		key  string // an object's current key, when wantKey is false
		// wantKey: the object's next string token is a key.
		wantKey bool
	}
	var open []level
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or invalid JSON the schema check reports
		}
		var top *level
		if len(open) > 0 {
			top = &open[len(open)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.keys != nil && top.wantKey {
			if top.keys[s] {
				where := "at the top level"
				if top.path != "" {
					where = "in the object at " + textutil.Shorten(top.path, 200)
				}
				return fmt.Errorf("arguments: key %s given twice %s; give each key once",
					textutil.Shorten(strconv.Quote(s), 100), where)
			}
			top.keys[s] = true
			top.key, top.wantKey = s, false
			continue
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			open = open[:len(open)-1]
			continue
		}
		// A value: an element of the array or the member of the object on top.
		path := ""
		if top != nil {
			if top.keys != nil {
				path = joinPath(top.path, top.key)
				top.wantKey = true
			} else {
				path = top.path
				if len(path) <= maxPath {
					path += "[" + strconv.Itoa(top.next) + "]"
				}
				top.next++
			}
		}
		switch tok {
		case json.Delim('{'):
			open = append(open, level{path: path, keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			open = append(open, level{path: path})
		}
	}
}

// maxPath bounds a path RepeatedKey builds: past it, deeper levels are not
// added (the message shows the start of the path, cut).
const maxPath = 256

// joinPath adds an object's key to a path: plain keys as `a.b`, any other
// quoted (`a."x y"`).
func joinPath(path, key string) string {
	if len(path) > maxPath {
		return path
	}
	if !textutil.Shape(key, 1, 64, textutil.Word) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
