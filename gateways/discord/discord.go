// Package discord is the Discord gateway. In this version it holds only its
// configuration section (gateways.discord): keys, defaults, validation,
// secrets, doctor and start-up lines. There is no adapter yet, so a
// configured Discord gateway is reported and ignored.
package discord

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// Name is the gateway's name, the first part of its conversation keys and
// identities.
const Name = "discord"

// DefaultAPIURL is Discord's REST base.
const DefaultAPIURL = "https://discord.com"

// Spec is the Discord gateway's entry in the gateway table.
func Spec() confkit.Spec {
	return confkit.Spec{
		Name:        Name,
		New:         func() confkit.Section { return &Section{APIURL: DefaultAPIURL} },
		EnvPrefixes: []string{"DISCORD_"},
	}
}

// Section is the gateways.discord configuration section.
type Section struct {
	// Enable is the "enabled" key as written; nil when absent. Use Enabled.
	Enable *bool          `yaml:"enabled"`
	Token  confkit.Secret `yaml:"token"`
	// APIURL is the REST base (https://discord.com).
	APIURL string `yaml:"api_url"`
	// GatewayURL overrides the websocket URL; empty asks the API for it.
	GatewayURL string `yaml:"gateway_url"`
	// AllowList lists who may talk to the bot (user or channel ids).
	AllowList []string `yaml:"allow"`
}

var _ gateways.Section = (*Section)(nil)

// Enabled reports whether the gateway is configured to run: credentials
// set and not disabled.
func (s *Section) Enabled() bool { return confkit.Enabled(s.Enable, s.Token != "") }

// Check validates the section.
func (s *Section) Check(c *confkit.Checker, _ confkit.Globals) {
	c.Credentials(s.Enable, confkit.Credential{Key: "token", Set: s.Token != ""})
	if c.Required("api_url", s.APIURL) {
		c.URL("api_url", s.APIURL, "http", "https")
	}
	if s.GatewayURL != "" {
		c.URL("gateway_url", s.GatewayURL, "ws", "wss")
	}
	c.IDs("allow", s.AllowList)
}

// Secrets returns the bot token.
func (s *Section) Secrets() []confkit.Secret { return []confkit.Secret{s.Token} }

// URLs returns the REST and websocket URLs.
func (s *Section) URLs() []string { return []string{s.APIURL, s.GatewayURL} }

// Allow returns gateways.discord.allow.
func (s *Section) Allow() []string { return s.AllowList }

// Doctor says plainly that this version has no Discord adapter.
func (s *Section) Doctor() gateways.Status {
	if s.Enabled() {
		return gateways.Status{Lines: []string{Name + ": configured, but this version has no discord adapter yet: ignored"}}
	}
	return gateways.Status{Lines: []string{Name + ": not available in this version"}}
}

// Warnings says, when the section is configured, that it is ignored.
func (s *Section) Warnings() []string {
	if !s.Enabled() {
		return nil
	}
	return []string{"gateways.discord is configured, but this version has no Discord adapter yet: ignored"}
}

// Build returns nil: there is no adapter in this version.
func (s *Section) Build(context.Context, gateways.Deps) (gateways.Gateway, error) { return nil, nil }
