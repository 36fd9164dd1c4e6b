package confkit

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"max_steps", "timeout", "history", "providers", "llm", "telegram", "token"}
	for _, tt := range []struct {
		word, want string
	}{
		{"max_step", "max_steps"},
		{"timeuot", "timeout"}, // a swap is one edit
		{"telegarm", "telegram"},
		{"lm", "llm"},
		{"tokn", "token"},
		{"foo", ""},
		{"frobnicate", ""},
		{"timeout", ""}, // known already: nothing to suggest
		{"", ""},
	} {
		got, ok := Nearest(tt.word, known)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Nearest(%q) = %q, %v; want %q", tt.word, got, ok, tt.want)
		}
	}
}
