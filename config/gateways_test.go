package config

import (
	"testing"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/gateways/console"
	"github.com/gatehouse-bot/gatehouse/gateways/slack"
	"github.com/gatehouse-bot/gatehouse/gateways/telegram"
)

// specs is the real gateway table: the configuration tests decode the
// sections the gateway packages define.
func specs() []GatewaySpec { return gatewaytable.Specs() }

func consoleOf(c *Config) *console.Section {
	return c.Gateways.Section(console.Name).(*console.Section)
}

func telegramOf(c *Config) *telegram.Section {
	return c.Gateways.Section(telegram.Name).(*telegram.Section)
}

func slackOf(c *Config) *slack.Section { return c.Gateways.Section(slack.Name).(*slack.Section) }

func TestGatewayEnabling(t *testing.T) {
	tests := []struct {
		name                              string
		src                               string
		console, telegram, discord, slack bool
	}{
		{"nothing set", "", true, false, false, false},
		{"credentials enable", `gateways:
  telegram: {token: t-1}
  discord: {token: d-1}
  slack: {bot_token: xoxb-1, app_token: xapp-1}`, true, true, true, true},
		{"enabled false wins", `gateways:
  console: {enabled: false}
  telegram: {enabled: false, token: t-1}
  discord: {enabled: false, token: d-1}
  slack: {enabled: false, bot_token: xoxb-1}`, false, false, false, false},
		{"enabled true with credentials", `gateways:
  telegram: {enabled: true, token: t-1}
  slack: {enabled: true, bot_token: a, app_token: b}`, true, true, false, true},
		{"empty token from unset variable", `gateways: {telegram: {token: "${NOPE}"}}`, true, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustParse(t, tt.src, noEnv).Gateways
			got := [4]bool{g.Enabled("console"), g.Enabled("telegram"), g.Enabled("discord"), g.Enabled("slack")}
			if want := [4]bool{tt.console, tt.telegram, tt.discord, tt.slack}; got != want {
				t.Errorf("console, telegram, discord, slack enabled = %v, want %v", got, want)
			}
		})
	}
}

func TestWebhookModeValid(t *testing.T) {
	c := mustParse(t, `
gateways:
  telegram:
    token: t-1
    mode: webhook
    webhook: {public_url: "https://bot.example.com/tg", secret_token: "s3cr3t_Token-1"}
`, noEnv)
	w := telegramOf(c).Webhook
	if telegramOf(c).Mode != telegram.ModeWebhook || w.Listen != "" || w.SecretToken.Value() != "s3cr3t_Token-1" {
		t.Errorf("telegram = %+v", telegramOf(c))
	}
}
