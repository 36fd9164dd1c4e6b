// Package gatewaytable is the one list of the bot's gateways. Configuration
// decoding and validation, secret redaction, doctor, the shell tool's
// environment scrubber, the allow lists and the app's wiring all iterate
// over it. Adding a gateway is its package plus one line in Specs.
package gatewaytable

import (
	"fmt"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
	"github.com/gatehouse-bot/gatehouse/gateways/discord"
	"github.com/gatehouse-bot/gatehouse/gateways/slack"
	"github.com/gatehouse-bot/gatehouse/gateways/telegram"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// Specs returns the gateway table, in the order sections are checked and
// shown. Each call returns a fresh slice.
func Specs() []confkit.Spec {
	return []confkit.Spec{
		console.Spec(),
		telegram.Spec(),
		discord.Spec(),
		slack.Spec(),
	}
}

// EnvPrefixes returns every gateway's environment variable prefixes.
func EnvPrefixes() []string {
	var out []string
	for _, s := range Specs() {
		out = append(out, s.EnvPrefixes...)
	}
	return out
}

// Named is a gateway's section with its name.
type Named struct {
	Name    string
	Section gateways.Section
}

// Decoded are the gateway sections of a loaded configuration
// (config.Gateways). It is an interface so that this package does not
// import config, whose tests use this table.
type Decoded interface {
	Names() []string
	Section(name string) confkit.Section
}

// Sections returns the decoded sections in table order, as gateways.
// They must have been decoded with Specs.
func Sections(g Decoded) ([]Named, error) {
	names := g.Names()
	out := make([]Named, 0, len(names))
	for _, name := range names {
		s, ok := g.Section(name).(gateways.Section)
		if !ok {
			return nil, fmt.Errorf("gateways.%s: section %T is not a gateways.Section", name, g.Section(name))
		}
		out = append(out, Named{Name: name, Section: s})
	}
	return out, nil
}

// UsesTerminal reports whether an enabled gateway talks on the bot's own
// stdin and stdout.
func UsesTerminal(g Decoded) bool {
	for _, name := range g.Names() {
		if t, ok := g.Section(name).(gateways.TerminalUser); ok && t.UsesTerminal() {
			return true
		}
	}
	return false
}

// LocalCaller is the identity and the conversation of the bot's own
// terminal, the caller that CLI tools (bot policy test) assume when none is
// given.
func LocalCaller() (identity, conversation string) {
	return string(console.Identity), console.Conversation().Key()
}
