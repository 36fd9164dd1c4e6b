package console

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// Spec is the console's entry in the gateway table. The console's one
// person, the machine's user, approves when hitl.approvers is absent.
func Spec() confkit.Spec {
	return confkit.Spec{
		Name:             Name,
		New:              func() confkit.Section { return &Section{} },
		DefaultApprovers: []string{string(Identity)},
	}
}

// Section is the gateways.console configuration section.
type Section struct {
	// Enable is the "enabled" key as written; nil when absent. Use Enabled.
	Enable *bool `yaml:"enabled"`
}

var (
	_ gateways.Section      = (*Section)(nil)
	_ gateways.TerminalUser = (*Section)(nil)
	_ gateways.InputEnder   = (*Console)(nil)
)

// Enabled reports whether the console runs; it does unless disabled.
func (s *Section) Enabled() bool { return s.Enable == nil || *s.Enable }

// Check has nothing to check: "enabled" is decoded as a bool.
func (s *Section) Check(*confkit.Checker, confkit.Globals) {}

// Secrets returns none.
func (s *Section) Secrets() []confkit.Secret { return nil }

// URLs returns none.
func (s *Section) URLs() []string { return nil }

// Allow lets the console's one person talk: the machine's user.
func (s *Section) Allow() []string { return []string{string(Identity)} }

// UsesTerminal reports whether the console will read the bot's stdin.
func (s *Section) UsesTerminal() bool { return s.Enabled() }

// Doctor says whether the console runs.
func (s *Section) Doctor() gateways.Status {
	if !s.Enabled() {
		return gateways.Status{Lines: []string{Name + ": disabled"}}
	}
	return gateways.Status{Runs: true, Lines: []string{Name + ": enabled (" + string(Identity) + ")"}}
}

// Warnings returns none.
func (s *Section) Warnings() []string { return nil }

// Build returns the console on d.Stdin and d.Stdout, or nil when it is
// disabled or there is no stdin.
func (s *Section) Build(_ context.Context, d gateways.Deps) (gateways.Gateway, error) {
	if !s.Enabled() || d.Stdin == nil {
		return nil, nil
	}
	return New(d.Stdin, d.Stdout, d.Interactive), nil
}
