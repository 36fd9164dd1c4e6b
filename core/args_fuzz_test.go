package core_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
)

// FuzzCanonicalArgs feeds CanonicalArgs what a model may propose as a
// call's arguments. Arguments that are not one valid JSON value come back
// as they are; valid ones come back as valid JSON with the same meaning,
// on one line, and canonicalising again changes nothing; valid ones that
// give a key twice in one object come back as they are.
func FuzzCanonicalArgs(f *testing.F) {
	for _, s := range []string{
		`{"path":"notes.txt"}`, `{ "command" : "rm \u002drf /" }`, `{"b":1,"a":[true,null,2.50]}`,
		``, `null`, `"x"`, `{"a":1} {"a":2}`, `{"a":1}}`, `[1,2]]`, `{"a":"<b>&</b>"}`,
		`{"a":"\u2028\u0000"}`, `{"a":1,"a":2}`, `{"n":1e400}`, "{\"a\":\"\xff\"}", `  {"x": {"y": []}}  `,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		out := core.CanonicalArgs(args)
		if !json.Valid([]byte(args)) {
			if out != args {
				t.Fatalf("invalid JSON %q was changed to %q", args, out)
			}
			return
		}
		if core.RepeatedKey(args) != nil {
			// One form would keep one copy of the key and hide the other.
			if out != args {
				t.Fatalf("arguments with a repeated key %q were changed to %q", args, out)
			}
			return
		}
		if !json.Valid([]byte(out)) {
			t.Fatalf("valid JSON %q canonicalised to invalid %q", args, out)
		}
		if strings.ContainsAny(out, "\n\r\t") {
			t.Fatalf("canonical form %q is not one line", out)
		}
		if again := core.CanonicalArgs(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", args, out, again)
		}
		var a, b any
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return // valid but, e.g., a number out of float64's range
		}
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatalf("canonical form %q does not decode: %v", out, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q (%#v) → %q (%#v)", args, a, out, b)
		}
	})
}
