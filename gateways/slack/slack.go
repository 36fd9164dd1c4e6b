// Package slack is the Slack gateway (Socket Mode). In this version it holds
// only its configuration section (gateways.slack): keys, defaults,
// validation, secrets, doctor and start-up lines. There is no adapter yet,
// so a configured Slack gateway is reported and ignored.
package slack

import (
	"context"
	"strings"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// Name is the gateway's name, the first part of its conversation keys and
// identities.
const Name = "slack"

// DefaultAPIURL is Slack's Web API base, with its trailing slash.
const DefaultAPIURL = "https://slack.com/api/"

// Spec is the Slack gateway's entry in the gateway table.
func Spec() confkit.Spec {
	return confkit.Spec{
		Name:        Name,
		New:         func() confkit.Section { return &Section{APIURL: DefaultAPIURL} },
		EnvPrefixes: []string{"SLACK_"},
	}
}

// Section is the gateways.slack configuration section.
type Section struct {
	// Enable is the "enabled" key as written; nil when absent. Use Enabled.
	Enable *bool `yaml:"enabled"`
	// BotToken is the xoxb- token for the Web API.
	BotToken confkit.Secret `yaml:"bot_token"`
	// AppToken is the xapp- token for Socket Mode.
	AppToken confkit.Secret `yaml:"app_token"`
	// APIURL is the Web API base; Check adds the trailing slash slack-go
	// needs (it appends method names to it).
	APIURL string `yaml:"api_url"`
	// AllowList lists who may talk to the bot (user or channel ids).
	AllowList []string `yaml:"allow"`
}

var _ gateways.Section = (*Section)(nil)

// Enabled reports whether the gateway is configured to run: both tokens
// set and not disabled.
func (s *Section) Enabled() bool {
	return confkit.Enabled(s.Enable, s.BotToken != "" && s.AppToken != "")
}

// Check validates the section and ends api_url with a slash.
func (s *Section) Check(c *confkit.Checker, _ confkit.Globals) {
	if s.APIURL != "" && !strings.HasSuffix(s.APIURL, "/") {
		s.APIURL += "/"
	}
	c.Credentials(s.Enable,
		confkit.Credential{Key: "bot_token", Set: s.BotToken != ""},
		confkit.Credential{Key: "app_token", Set: s.AppToken != ""})
	if c.Required("api_url", s.APIURL) {
		c.URL("api_url", s.APIURL, "http", "https")
	}
	c.IDs("allow", s.AllowList)
}

// Secrets returns the bot and app tokens.
func (s *Section) Secrets() []confkit.Secret { return []confkit.Secret{s.BotToken, s.AppToken} }

// URLs returns the Web API URL.
func (s *Section) URLs() []string { return []string{s.APIURL} }

// Allow returns gateways.slack.allow.
func (s *Section) Allow() []string { return s.AllowList }

// Doctor says plainly that this version has no Slack adapter.
func (s *Section) Doctor() gateways.Status {
	if s.Enabled() {
		return gateways.Status{Lines: []string{Name + ": configured, but this version has no slack adapter yet: ignored"}}
	}
	return gateways.Status{Lines: []string{Name + ": not available in this version"}}
}

// Warnings says, when the section is configured, that it is ignored.
func (s *Section) Warnings() []string {
	if !s.Enabled() {
		return nil
	}
	return []string{"gateways.slack is configured, but this version has no Slack adapter yet: ignored"}
}

// Build returns nil: there is no adapter in this version.
func (s *Section) Build(context.Context, gateways.Deps) (gateways.Gateway, error) { return nil, nil }
