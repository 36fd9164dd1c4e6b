package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestHITLPeople: hitl.people groups the identities of one person; each
// must be a well-formed identity of a known gateway and in one group only,
// and every error names the key under hitl.people.
func TestHITLPeople(t *testing.T) {
	c := mustParse(t, "hitl:\n  approvers: [console:local, slack:U0AAA]\n  people: [[console:local, slack:U0AAA, telegram:42], [discord:7]]\n", noEnv)
	want := [][]string{{"console:local", "slack:U0AAA", "telegram:42"}, {"discord:7"}}
	if !slices.EqualFunc(c.HITL.People, want, slices.Equal) {
		t.Fatalf("hitl.people = %q, want %q", c.HITL.People, want)
	}
	if c := mustParse(t, "hitl: {approvers: [console:local]}\n", noEnv); len(c.HITL.People) != 0 {
		t.Errorf("hitl.people by default = %q, want none", c.HITL.People)
	}
	tests := []struct {
		name, people, key, msg string
	}{
		{"not an identity", "[[console:local, nocolon]]", "hitl.people[0][1]", "want an identity gateway:id"},
		{"unknown gateway", "[[console:local, irc:bob]]", "hitl.people[0][1]", `unknown gateway "irc"`},
		{"in two groups", "[[console:local, slack:U0AAA], [slack:U0AAA, telegram:42]]", "hitl.people[1][0]", `"slack:U0AAA" is already in hitl.people[0]`},
		{"twice in one group", "[[slack:U0AAA, slack:U0AAA]]", "hitl.people[0][1]", `"slack:U0AAA" is already in hitl.people[0]`},
		{"empty group", "[[console:local], []]", "hitl.people[1]", "an empty group"},
		{"a schedule", "[[console:local, schedule:nightly]]", "hitl.people[0][1]", "a schedule is no person"},
		{"not a list of lists", "[console:local]", "hitl.people[0]", "want a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("hitl:\n  approvers: [console:local]\n  people: "+tt.people+"\n"), noEnv, specs())
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("Parse: %v; want *Error", err)
			}
			if e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got Key=%q Msg=%q\nwant Key=%q Msg~%q", e.Key, e.Msg, tt.key, tt.msg)
			}
		})
	}
}
