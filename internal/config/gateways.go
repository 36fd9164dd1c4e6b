package config

// Gateways configures the chat platform adapters. A gateway is enabled when
// its credentials are set; "enabled: false" turns it off regardless, and
// "enabled: true" without credentials is an error.
type Gateways struct {
	Console  Console  `yaml:"console"`
	Telegram Telegram `yaml:"telegram"`
	Discord  Discord  `yaml:"discord"`
	Slack    Slack    `yaml:"slack"`
}

// Gateway names, the first part of identities and conversation keys.
const (
	GatewayConsole  = "console"
	GatewayTelegram = "telegram"
	GatewayDiscord  = "discord"
	GatewaySlack    = "slack"
)

// knownGateways are the names identities and conversation keys may start with.
var knownGateways = []string{GatewayConsole, GatewayTelegram, GatewayDiscord, GatewaySlack}

// Console is the local terminal gateway.
type Console struct {
	// Enable is the "enabled" key as written; nil when absent. Use Enabled.
	Enable *bool `yaml:"enabled"`
}

// Enabled reports whether the console runs; it does unless disabled.
func (c Console) Enabled() bool { return c.Enable == nil || *c.Enable }

// Telegram update delivery modes.
const (
	ModePolling = "polling"
	ModeWebhook = "webhook"
)

// Telegram group chat behaviours.
const (
	// GroupMention answers in groups only when mentioned or replied to.
	GroupMention = "mention"
	// GroupAll answers every message in groups.
	GroupAll = "all"
)

// Telegram is the Telegram Bot API gateway.
type Telegram struct {
	// Enable is the "enabled" key as written; nil when absent. Use Enabled.
	Enable *bool  `yaml:"enabled"`
	Token  Secret `yaml:"token"`
	// APIURL is the Bot API server (self-hosted servers, fakes).
	APIURL string `yaml:"api_url"`
	// Allow lists who may talk to the bot (user or chat ids).
	Allow []string `yaml:"allow"`
	// Mode is ModePolling or ModeWebhook.
	Mode    string  `yaml:"mode"`
	Webhook Webhook `yaml:"webhook"`
	// Group is GroupMention or GroupAll.
	Group string `yaml:"group"`
}

// Enabled reports whether the gateway runs: credentials set and not disabled.
func (t Telegram) Enabled() bool { return enabled(t.Enable, t.Token != "") }

// Webhook configures Telegram's webhook mode.
type Webhook struct {
	// Listen is the webhook server's host:port; empty serves it on http.listen.
	Listen string `yaml:"listen"`
	// PublicURL is the URL Telegram posts updates to; required in webhook mode.
	PublicURL string `yaml:"public_url"`
	// SecretToken is checked on every update (X-Telegram-Bot-Api-Secret-Token);
	// required in webhook mode: 1-256 characters A-Z a-z 0-9 _ -.
	SecretToken Secret `yaml:"secret_token"`
}

// Discord is the Discord gateway.
type Discord struct {
	// Enable is the "enabled" key as written; nil when absent. Use Enabled.
	Enable *bool  `yaml:"enabled"`
	Token  Secret `yaml:"token"`
	// APIURL is the REST base (https://discord.com).
	APIURL string `yaml:"api_url"`
	// GatewayURL overrides the websocket URL; empty asks the API for it.
	GatewayURL string `yaml:"gateway_url"`
	// Allow lists who may talk to the bot (user or channel ids).
	Allow []string `yaml:"allow"`
}

// Enabled reports whether the gateway runs: credentials set and not disabled.
func (d Discord) Enabled() bool { return enabled(d.Enable, d.Token != "") }

// Slack is the Slack gateway (Socket Mode).
type Slack struct {
	// Enable is the "enabled" key as written; nil when absent. Use Enabled.
	Enable *bool `yaml:"enabled"`
	// BotToken is the xoxb- token for the Web API.
	BotToken Secret `yaml:"bot_token"`
	// AppToken is the xapp- token for Socket Mode.
	AppToken Secret `yaml:"app_token"`
	// APIURL is the Web API base, with its trailing slash.
	APIURL string `yaml:"api_url"`
	// Allow lists who may talk to the bot (user or channel ids).
	Allow []string `yaml:"allow"`
}

// Enabled reports whether the gateway runs: both tokens set and not disabled.
func (s Slack) Enabled() bool {
	return enabled(s.Enable, s.BotToken != "" && s.AppToken != "")
}

func enabled(explicit *bool, credentials bool) bool {
	if explicit != nil && !*explicit {
		return false
	}
	return credentials
}
