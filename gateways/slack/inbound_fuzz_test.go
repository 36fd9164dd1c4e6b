package slack

import (
	"strings"
	"testing"
)

// slackEscaper escapes message text as Slack does before delivering it.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// FuzzInboundText feeds the inbound text path message text as Slack
// delivers it: what people typed, escaped, around user mentions (<@U…>,
// <@U…|name>), some of the bot. In it, "\x00" separates typed text from
// a mention's id; an empty id is the bot's, and "|" adds a name. After
// stripMention no mention of the bot is left, every other mention is, a
// second pass changes nothing, and unescaping gives back the words typed.
func FuzzInboundText(f *testing.F) {
	for _, s := range []string{
		"\x00\x00 /approve K7Q2MX9P", "hi \x00U123\x00, ask \x00\x00 about <b> & co", "\x00U1|bob\x00\x00\x00 /pending",
		"plain text, no mention", "a &lt; b &amp;&amp; c &gt; d", "\x00|the bot\x00 hello", "<@UBOT>", "\x00\x00",
		"&lt;@UBOT&gt; typed literally",
	} {
		f.Add(s)
	}
	g := &Gateway{botUser: "UBOT"}
	f.Fuzz(func(t *testing.T, in string) {
		var raw strings.Builder
		var typed []string
		others := 0
		for i, part := range strings.Split(in, "\x00") {
			if i%2 == 0 {
				raw.WriteString(slackEscaper.Replace(part))
				typed = append(typed, part)
				continue
			}
			id, name, named := strings.Cut(part, "|")
			id = strings.Map(func(r rune) rune {
				if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
					return r
				}
				return -1
			}, id)
			if id == "" {
				id = g.botUser
			} else if id != g.botUser {
				others++
			}
			raw.WriteString("<@" + id)
			if named {
				raw.WriteString("|" + slackEscaper.Replace(name))
			}
			raw.WriteString(">")
		}
		text := raw.String()
		out := g.stripMention(text)
		if g.mentions(out) {
			t.Fatalf("stripMention(%q) = %q, still mentions the bot", text, out)
		}
		if again := g.stripMention(out); again != out {
			t.Fatalf("stripMention(%q) = %q, then %q", text, out, again)
		}
		kept := 0
		for _, m := range mentionRE.FindAllStringSubmatch(out, -1) {
			if m[1] != g.botUser {
				kept++
			}
		}
		if kept != others {
			t.Fatalf("stripMention(%q) = %q keeps %d other mentions, want %d", text, out, kept, others)
		}
		if others == 0 {
			noSpace := func(s string) string { return strings.Join(strings.Fields(s), "") }
			if got, want := noSpace(unescapeSlack(out)), noSpace(strings.Join(typed, "")); got != want {
				t.Fatalf("typed %q, delivered as %q, reads %q", want, text, got)
			}
		}
		tsTime(in) // any ts: no panic
	})
}
