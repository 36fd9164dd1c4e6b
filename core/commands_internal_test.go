package core

import "testing"

func TestCommandName(t *testing.T) {
	for text, want := range map[string]string{
		"/help":                 "help",
		"  /Status please":      "status",
		"/approve@my_bot K7Q2":  "approve",
		"/cancel\nnow":          "cancel",
		"/cancel\tnow":          "cancel",
		"/status\u00a0please":   "status",
		"/tmp/x is full":        "",
		"/x2 go":                "",
		"hello /help":           "",
		"/":                     "",
		"/help@":                "",
		"/frobnicate something": "frobnicate",
	} {
		if got := commandName(text); got != want {
			t.Errorf("commandName(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"aprove", "approve", 1}, {"stauts", "status", 1}, {"help", "help", 0}, {"", "abc", 3}, {"frobnicate", "reset", 8}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
