package core

import (
	"strings"
	"testing"
)

// FuzzCommandName feeds commandName the first line of any chat message.
// The name is empty or lower-case ASCII letters that begin the message
// after its slash; the near-miss answer to an unknown one suggests only a
// known command within maxCommandDistance; and editDistance is a
// distance: zero only between equal strings, symmetric, and between the
// difference in length and the longer length.
func FuzzCommandName(f *testing.F) {
	for _, s := range []string{
		"/help", "  /Status please", "/approve@my_bot K7Q2", "/cancel\nnow", "/tmp/x is full", "/stauts", "/",
		"hello /help", "/HELP@", "/" + strings.Repeat("a", 300), "\u00a0/reset", "/resét", "/undo 3", "/checkpoints\t",
	} {
		f.Add(s, "status")
	}
	e := &Engine{}
	f.Fuzz(func(t *testing.T, text, other string) {
		name := commandName(text)
		if name != "" {
			if strings.Trim(name, "abcdefghijklmnopqrstuvwxyz") != "" {
				t.Fatalf("commandName(%q) = %q, not lower-case letters", text, name)
			}
			if word := strings.TrimSpace(text); len(word) <= len(name) || !strings.EqualFold(word[1:len(name)+1], name) || word[0] != '/' {
				t.Fatalf("commandName(%q) = %q, not the message's first word", text, name)
			}
			reply := e.unknownCommand(name)
			if _, hint, ok := strings.Cut(reply, "did you mean /"); ok {
				hint, _, _ = strings.Cut(hint, "?")
				known := false
				for _, c := range e.commands() {
					known = known || c.Name == hint
				}
				if !known || editDistance(name, hint) > maxCommandDistance {
					t.Fatalf("unknownCommand(%q) = %q", name, reply)
				}
			}
		}
		a, b := text, other
		if len(a) > 200 {
			a = a[:200]
		}
		d := editDistance(a, b)
		if d != editDistance(b, a) {
			t.Fatalf("editDistance(%q, %q) = %d, not symmetric", a, b, d)
		}
		if (d == 0) != (a == b) || d < absInt(len(a)-len(b)) || d > max(len(a), len(b)) {
			t.Fatalf("editDistance(%q, %q) = %d", a, b, d)
		}
	})
}

func absInt(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
