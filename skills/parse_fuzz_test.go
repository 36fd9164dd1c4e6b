package skills

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: no input makes Parse or Validate panic; a front matter that
// parses gives a body that is a suffix of the input, and Validate's
// problems all name a field and a rule.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		md("name: a", "description: d"),
		"---\nname: x\n---",
		"---\r\nname: x\r\ndescription: y\r\n---\r\nbody",
		"\ufeff---\nmetadata: {a: b}\n---\n",
		"---\n- a\n---\n",
		"---\nname: &a [*a]\n---\n",
		"---\na: *b\n---\n",
		"no front matter",
		"---\nname: [\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fm, body, err := Parse([]byte(in))
		if err != nil {
			return
		}
		if !strings.HasSuffix(in, body) {
			t.Fatalf("body %q is not the end of the input", body)
		}
		for _, p := range Validate(fm, "folder") {
			if p.Field == "" || p.Rule == "" || !utf8.ValidString(p.String()) {
				t.Fatalf("problem without field or rule: %+v", p)
			}
		}
	})
}
