package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// DefaultAPIURL is Slack's Web API base, with its trailing slash.
const DefaultAPIURL = "https://slack.com/api/"

// Spec is the Slack gateway's entry in the gateway table.
func Spec() confkit.Spec {
	return confkit.Spec{
		Name:        Name,
		New:         func() confkit.Section { return NewSection() },
		EnvPrefixes: []string{"SLACK_"},
		Setup: &confkit.Setup{Title: "Slack", URLKey: "api_url", Secrets: []confkit.SetupSecret{
			{Key: "bot_token", Env: "SLACK_BOT_TOKEN", Prompt: "Slack bot token, xoxb-… (your app's OAuth & Permissions page)"},
			{Key: "app_token", Env: "SLACK_APP_TOKEN", Prompt: "Slack app-level token for Socket Mode, xapp-… (Basic Information, App-Level Tokens)"},
		}},
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
	// PairingOn hands a pairing code to a stranger who writes in a direct
	// message, for an approver's /pair (gateways.slack.pairing).
	PairingOn bool `yaml:"pairing"`
	// Mode is ModeSocket (default) or ModeEvents.
	Mode string `yaml:"mode"`
	// SigningSecret verifies Events API requests (events mode).
	SigningSecret confkit.Secret `yaml:"signing_secret"`
	// Listen is the Events API server's host:port; empty serves it on
	// http.listen at EventsPath.
	Listen string `yaml:"listen"`
	// Channel is ChannelMention (default) or ChannelAll.
	Channel string `yaml:"channel"`
}

var _ gateways.Section = (*Section)(nil)

// NewSection returns the section's defaults.
func NewSection() *Section {
	return &Section{APIURL: DefaultAPIURL, Mode: ModeSocket, Channel: ChannelMention}
}

// The tokens' keys with the variables the shipped configuration takes
// them from, for doctor's lines.
const (
	botTokenKey = "gateways.slack.bot_token (SLACK_BOT_TOKEN)"
	appTokenKey = "gateways.slack.app_token (SLACK_APP_TOKEN)"
)

// The prefixes of Slack's token kinds.
const (
	botPrefix  = "xoxb-" // a bot token (OAuth & Permissions)
	appPrefix  = "xapp-" // an app-level token (Basic Information), for Socket Mode
	userPrefix = "xoxp-" // a user token: not what the bot uses
)

// tokenProblems says which token is of the wrong kind or in the wrong
// key, without showing it: bot_token takes an xoxb- token, app_token
// (socket mode) an xapp- token.
func (s *Section) tokenProblems() []string {
	var p []string
	bot := s.BotToken.Value()
	switch {
	case strings.HasPrefix(bot, botPrefix):
	case strings.HasPrefix(bot, appPrefix):
		p = append(p, botTokenKey+": an app-level token (xapp-…) belongs in app_token; bot_token takes the bot token (xoxb-…, OAuth & Permissions)")
	case strings.HasPrefix(bot, userPrefix):
		p = append(p, botTokenKey+": a user token (xoxp-…); bot_token takes the bot token (xoxb-…, OAuth & Permissions)")
	default:
		p = append(p, botTokenKey+": not a Slack bot token (want xoxb-…, OAuth & Permissions)")
	}
	if s.Mode == ModeEvents {
		return p
	}
	app := s.AppToken.Value()
	switch {
	case strings.HasPrefix(app, appPrefix):
	case strings.HasPrefix(app, botPrefix):
		p = append(p, appTokenKey+": a bot token (xoxb-…) belongs in bot_token; app_token takes the app-level token (xapp-…, Basic Information › App-Level Tokens)")
	default:
		p = append(p, appTokenKey+": not a Slack app-level token (want xapp-…, Basic Information › App-Level Tokens)")
	}
	return p
}

// credentials are the keys the section's mode needs.
func (s *Section) credentials() []confkit.Credential {
	second := confkit.Credential{Key: "app_token", Set: s.AppToken != ""}
	if s.Mode == ModeEvents {
		second = confkit.Credential{Key: "signing_secret", Set: s.SigningSecret != ""}
	}
	return []confkit.Credential{{Key: "bot_token", Set: s.BotToken != ""}, second}
}

// Enabled reports whether the gateway is configured to run: the mode's
// credentials set (bot_token and app_token in socket mode, bot_token and
// signing_secret in events mode) and not disabled.
func (s *Section) Enabled() bool {
	all := true
	for _, c := range s.credentials() {
		all = all && c.Set
	}
	return confkit.Enabled(s.Enable, all)
}

// Check validates the section and ends api_url with a slash.
func (s *Section) Check(c *confkit.Checker, g confkit.Globals) {
	if s.APIURL != "" && !strings.HasSuffix(s.APIURL, "/") {
		s.APIURL += "/"
	}
	c.OneOf("mode", s.Mode, ModeSocket, ModeEvents)
	c.OneOf("channel", s.Channel, ChannelMention, ChannelAll)
	c.Credentials(s.Enable, s.credentials()...)
	if c.Required("api_url", s.APIURL) {
		c.URL("api_url", s.APIURL, "http", "https")
	}
	c.IDs("allow", s.AllowList)
	if s.Listen != "" {
		c.Listen("listen", s.Listen)
	}
	if s.Mode == ModeEvents && s.Enabled() && s.Listen == "" && g.HTTPListen == "" {
		c.Fail("listen", "required in events mode when http.listen is empty")
	}
}

// Secrets returns the bot and app tokens and the signing secret.
func (s *Section) Secrets() []confkit.Secret {
	return []confkit.Secret{s.BotToken, s.AppToken, s.SigningSecret}
}

// URLs returns the Web API URL.
func (s *Section) URLs() []string { return []string{s.APIURL} }

// Allow returns gateways.slack.allow.
func (s *Section) Allow() []string { return s.AllowList }

// Pairs returns gateways.slack.pairing.
func (s *Section) Pairs() bool { return s.PairingOn }

// Doctor says whether the gateway runs, how it receives and who may talk
// to it; a token of the wrong kind, or in the wrong key, is a problem.
func (s *Section) Doctor() gateways.Status {
	if !s.Enabled() {
		return gateways.Status{Lines: []string{Name + ": disabled (set " + botTokenKey + " and app_token (SLACK_APP_TOKEN) to enable)"}}
	}
	how := "socket mode"
	if s.Mode == ModeEvents {
		where := "http.listen"
		if s.Listen != "" {
			where = s.Listen
		}
		how = "events API on " + where + EventsPath
	}
	return gateways.Status{Runs: true, Lines: []string{fmt.Sprintf("%s: enabled (%s, channels: %s); who may talk: %s",
		Name, how, s.Channel, gateways.WhoMayTalk(s.AllowList))}, Problems: s.tokenProblems()}
}

// Warnings returns none: every valid section runs.
func (s *Section) Warnings() []string { return nil }

// Build constructs the gateway; it checks the bot token with auth.test. In
// events mode without its own listen address, the handler is mounted on
// http.listen at EventsPath.
func (s *Section) Build(ctx context.Context, d gateways.Deps) (gateways.Gateway, error) {
	if !s.Enabled() {
		return nil, nil
	}
	cfg := Config{
		BotToken:      s.BotToken.Value(),
		AppToken:      s.AppToken.Value(),
		APIURL:        s.APIURL,
		Mode:          s.Mode,
		SigningSecret: s.SigningSecret.Value(),
		Listen:        s.Listen,
		Channel:       s.Channel,
		HTTPClient:    d.HTTPClient,
	}
	if d.Tune != nil {
		d.Tune(&cfg)
	}
	if cfg.Mode == ModeEvents && cfg.Listen == "" && d.Mount == nil {
		return nil, fmt.Errorf("gateways.slack.listen: empty, and http.listen is empty too: nothing would serve the Events API")
	}
	gw, err := New(ctx, cfg, Deps{Log: d.Log, Approvals: d.Approvals, Metrics: d.Metrics, Memory: d.Memory, Auth: d.Auth, Shared: d.Shared})
	if err != nil {
		return nil, fmt.Errorf("gateways.slack: %w", err)
	}
	if cfg.Mode == ModeEvents && cfg.Listen == "" {
		d.Mount("POST "+EventsPath, gw.EventsHandler())
	}
	return gw, nil
}
