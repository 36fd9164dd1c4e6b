package discord

import (
	"context"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// Spec is the Discord gateway's entry in the gateway table.
func Spec() confkit.Spec {
	return confkit.Spec{
		Name:        Name,
		New:         func() confkit.Section { return NewSection() },
		EnvPrefixes: []string{"DISCORD_"},
		Setup: &confkit.Setup{Title: "Discord", URLKey: "api_url", Secrets: []confkit.SetupSecret{
			{Key: "token", Env: "DISCORD_BOT_TOKEN", Prompt: "Discord bot token (Developer Portal: your application, Bot, Reset Token)"},
		}},
	}
}

// Section is the gateways.discord configuration section. Its yaml keys are
// part of the product's contract.
type Section struct {
	// Enable is the "enabled" key as written; nil when absent. Use Enabled.
	Enable *bool          `yaml:"enabled"`
	Token  confkit.Secret `yaml:"token"`
	// APIURL is the REST base (https://discord.com): scheme, host and an
	// optional path prefix that replace Discord's on every request.
	APIURL string `yaml:"api_url"`
	// GatewayURL overrides the websocket URL; empty asks the API for it.
	GatewayURL string `yaml:"gateway_url"`
	// AllowList lists who may talk to the bot (discord:<user id>, user or
	// channel ids).
	AllowList []string `yaml:"allow"`
	// PairingOn hands a pairing code to a stranger who writes in a direct
	// message, for an approver's /pair (gateways.discord.pairing).
	PairingOn bool `yaml:"pairing"`
	// Guild is GuildMention or GuildAll.
	Guild string `yaml:"guild"`
	// GuildID, when set, registers the slash commands in that guild only
	// (they appear at once) instead of globally.
	GuildID string `yaml:"guild_id"`
}

var _ gateways.Section = (*Section)(nil)

// NewSection returns the section's defaults.
func NewSection() *Section {
	return &Section{APIURL: DefaultAPIURL, Guild: GuildMention}
}

// Enabled reports whether the gateway is configured to run: credentials
// set and not disabled.
func (s *Section) Enabled() bool { return confkit.Enabled(s.Enable, s.Token != "") }

// snowflake reports whether id has the shape of a Discord id.
func snowflake(id string) bool { return textutil.Shape(id, 1, 20, textutil.Digits) }

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
	c.OneOf("guild", s.Guild, GuildMention, GuildAll)
	if s.GuildID != "" && !snowflake(s.GuildID) {
		c.Fail("guild_id", "want a guild id (digits only)")
	}
}

// Secrets returns the bot token.
func (s *Section) Secrets() []confkit.Secret { return []confkit.Secret{s.Token} }

// URLs returns the REST and websocket URLs.
func (s *Section) URLs() []string { return []string{s.APIURL, s.GatewayURL} }

// Allow returns gateways.discord.allow.
func (s *Section) Allow() []string { return s.AllowList }

// Pairs returns gateways.discord.pairing.
func (s *Section) Pairs() bool { return s.PairingOn }

// tokenKey names the bot token's key and the variable the shipped
// configuration takes it from, for doctor's lines.
const tokenKey = "gateways.discord.token (DISCORD_BOT_TOKEN)"

// Doctor says whether the gateway runs and who may talk to it.
func (s *Section) Doctor() gateways.Status {
	if !s.Enabled() {
		return gateways.Status{Lines: []string{Name + ": disabled (set " + tokenKey + " to enable)"}}
	}
	line := Name + ": enabled; guild channels: " + s.Guild + "; who may talk: " + gateways.WhoMayTalk(s.AllowList)
	if s.GuildID != "" {
		line += "; slash commands in guild " + s.GuildID
	}
	return gateways.Status{Runs: true, Lines: []string{line}}
}

// Warnings returns none: every valid section runs.
func (s *Section) Warnings() []string { return nil }

// Build constructs the gateway; it checks the token with GET /users/@me.
func (s *Section) Build(ctx context.Context, d gateways.Deps) (gateways.Gateway, error) {
	if !s.Enabled() {
		return nil, nil
	}
	c := Config{
		Token:      s.Token.Value(),
		APIURL:     s.APIURL,
		GatewayURL: s.GatewayURL,
		Guild:      s.Guild,
		GuildID:    s.GuildID,
		HTTPClient: d.HTTPClient,
	}
	if d.Tune != nil {
		d.Tune(&c)
	}
	gw, err := New(ctx, c, Deps{Log: d.Log, Approvals: d.Approvals, Metrics: d.Metrics,
		Lease: d.Lease, Shared: d.Shared, Memory: d.Memory})
	if err != nil {
		return nil, fmt.Errorf("gateways.discord: %w", err)
	}
	return gw, nil
}
