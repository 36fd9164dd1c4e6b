package discord

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/hitl"
)

// FuzzCommandText feeds commandText the options of a slash command, which
// a client can forge. Exactly one of text and problem comes back, on one
// line of printable characters; the text parses as the typed command it
// stands for, with the token, "always" and reason the options gave, and a
// token option that is no token is refused (but see the /deny case below).
func FuzzCommandText(f *testing.F) {
	for _, c := range []struct {
		name, token, reason string
		always, boolAlways  bool
	}{
		{"approve", "K7Q2MX9P", "", true, true}, {"approve", "k7q2-mx9p", "", false, true}, {"deny", "K7Q2MX9P", "too\nrisky\tnow", false, false},
		{"pending", "", "", false, false}, {"frobnicate\n\x00", "x", "", false, false}, {"approve", " K7Q2MX9P ", "", true, false},
		{"deny", "K7Q2", "MX9P why", false, false}, {"approve", "always", "", true, true}, {"deny", "K7Q2MX9P", "\u202e\u200bno", false, false},
		{"deny", strings.Repeat("Q", 65), strings.Repeat("é", 600), false, false},
	} {
		f.Add(c.name, c.token, c.reason, c.always, c.boolAlways)
	}
	f.Fuzz(func(t *testing.T, name, token, reason string, always, boolAlways bool) {
		d := discordgo.ApplicationCommandInteractionData{Name: name, Options: []*discordgo.ApplicationCommandInteractionDataOption{
			{Name: "token", Value: token}, {Name: "reason", Value: reason}, nil,
		}}
		if boolAlways {
			d.Options = append(d.Options, &discordgo.ApplicationCommandInteractionDataOption{Name: "always", Value: always})
		} else {
			d.Options = append(d.Options, &discordgo.ApplicationCommandInteractionDataOption{Name: "always", Value: "true"})
		}
		text, problem := commandText(d)
		if (text == "") == (problem == "") {
			t.Fatalf("commandText(%q, %q, %q) = %q, %q: want exactly one", name, token, reason, text, problem)
		}
		for _, s := range []string{text, problem} {
			if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
				t.Fatalf("commandText(%q, %q, %q) = %q, %q: not one line of printable text", name, token, reason, text, problem)
			}
		}
		if problem != "" {
			return
		}
		cmd, ok := hitl.ParseCommand(text)
		if !ok || string(cmd.Verb) != name {
			t.Fatalf("commandText(%q, …) = %q, which parses as %+v, %v", name, text, cmd, ok)
		}
		want, valid := hitl.NormalizeToken(strings.TrimSpace(token))
		switch {
		case name == "pending":
			return
		case !valid:
			// The typed form joins a token split in two ("K7Q2 MX9P"), so
			// a /deny whose token option is half a token and whose reason
			// starts with the other half denies the whole one. Known; only
			// /deny can do it ("always" holds letters no token has).
			first, _, _ := strings.Cut(oneLine(reason, 500), " ")
			joined, ok := hitl.NormalizeToken(strings.TrimSpace(token) + first)
			if cmd.Problem != "" || (name == "deny" && ok && cmd.Token == joined) {
				return
			}
			t.Fatalf("token %q is no token, yet %q parses as %+v", token, text, cmd)
		case cmd.Problem != "" || cmd.Token != want:
			t.Fatalf("commandText(%q, %q, …) = %q, which parses as %+v", name, token, text, cmd)
		case cmd.Always != (name == "approve" && boolAlways && always):
			t.Fatalf("always=%v (a bool: %v) became %q, parsed as %+v", always, boolAlways, text, cmd)
		case name == "deny" && cmd.Reason != oneLine(reason, 500):
			t.Fatalf("reason %q became %q, parsed as %q", reason, text, cmd.Reason)
		}
		if n := utf8.RuneCountInString(cmd.Reason); n > 500 {
			t.Fatalf("reason of %d characters", n)
		}
	})
}
