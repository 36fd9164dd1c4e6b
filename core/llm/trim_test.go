package llm

import (
	"strings"
	"testing"
)

// seq builds messages from letters: u user, a assistant (with a call), t tool.
func seq(s string) []Message {
	out := make([]Message, len(s))
	for i, c := range s {
		switch c {
		case 'u':
			out[i] = Message{Role: RoleUser}
		case 'a':
			out[i] = Message{Role: RoleAssistant}
		case 't':
			out[i] = Message{Role: RoleTool}
		}
	}
	return out
}

func roles(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteByte(string(m.Role)[0])
	}
	return b.String()
}

func TestTrim(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"uaua", 0, "uaua"},
		{"uaua", 10, "uaua"},
		{"uaua", 2, "ua"},
		{"uattaua", 3, "ua"},        // never starts at a tool message
		{"uatatata", 4, "uatatata"}, // the turn in progress is kept whole
		{"uauatatata", 4, "uatatata"},
		{"tata", 2, ""}, // no user message at all
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := roles(Trim(seq(tt.in), tt.max)); got != tt.want {
			t.Errorf("Trim(%s, %d) = %s, want %s", tt.in, tt.max, got, tt.want)
		}
	}
}
