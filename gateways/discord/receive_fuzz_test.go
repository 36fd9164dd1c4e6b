package discord

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// FuzzAddressed feeds addressed the content of a message, as any member
// of a channel can write it. The text it returns has none of the bot's
// mentions left, is trimmed, keeps every other user's mention, and is
// unchanged by a second pass; a mention of the bot, or a command, makes
// the message addressed.
func FuzzAddressed(f *testing.F) {
	for _, s := range []string{
		"<@42> hello", "hi <@!42>, status?", "/approve K7Q2MX9P", "<@43> not me", "<@42><@42> twice", "  /",
		"<@42", "<@4242> close", "", "\u00a0<@42>\u00a0",
	} {
		f.Add(s)
	}
	g := &Gateway{self: discordgo.User{ID: "42"}}
	tags := []string{"<@42>", "<@!42>"}
	f.Fuzz(func(t *testing.T, content string) {
		ok, text := g.addressed(&discordgo.Message{Content: content})
		for _, tag := range tags {
			if strings.Contains(text, tag) {
				t.Fatalf("addressed(%q) = %q, still mentions the bot", content, text)
			}
			if strings.Contains(content, tag) && !ok {
				t.Fatalf("addressed(%q) = false though it mentions the bot", content)
			}
		}
		if text != strings.TrimSpace(text) {
			t.Fatalf("addressed(%q) = %q, not trimmed", content, text)
		}
		if len(text) > 1 && text[0] == '/' && !ok {
			t.Fatalf("addressed(%q) = false for a command", content)
		}
		if other := "<@43>"; strings.Count(text, other) < strings.Count(content, other) {
			t.Fatalf("addressed(%q) = %q, lost another user's mention", content, text)
		}
		if _, again := g.addressed(&discordgo.Message{Content: text}); again != text {
			t.Fatalf("addressed(%q) = %q, then %q", content, text, again)
		}
	})
}
