package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNestedKeysOnce: a key twice in one object at any depth is refused;
// the same key in sibling objects, strings equal to keys, and arrays of
// equal strings are not.
func TestNestedKeysOnce(t *testing.T) {
	for _, tt := range []struct {
		v   string
		dup string // the key named in the error; "" for none
	}{
		{`1`, ""},
		{`"x"`, ""},
		{`{"a":1,"b":2}`, ""},
		{`{"a":{"x":1},"b":{"x":1}}`, ""},
		{`{"a":"a","b":"a"}`, ""},
		{`["x","x",{"x":1},{"x":2}]`, ""},
		{`{"a":[1,{"b":{}}],"c":[],"d":{}}`, ""},
		{`{"a":{"b":1},"a2":2,"c":[{"k":"v"}]}`, ""},
		{`{"x":1,"x":2}`, "x"},
		{`{"a":{"y":[],"y":{}}}`, "y"},
		{`[{"ok":1},{"z":1,"q":[2],"z":3}]`, "z"},
		{`{"a":{"b":1},"a":2}`, "a"},
		{`{"a":[{"b":1}],"c":{"d":{"e":{"f":1,"f":1}}}}`, "f"},
	} {
		err := nestedKeysOnce("arg", json.RawMessage(tt.v))
		switch {
		case tt.dup == "" && err != nil:
			t.Errorf("%s: %v", tt.v, err)
		case tt.dup != "" && (err == nil || !strings.Contains(err.Error(), `"`+tt.dup+`" twice`)):
			t.Errorf("%s: %v; want %q named twice", tt.v, err, tt.dup)
		}
	}
}
