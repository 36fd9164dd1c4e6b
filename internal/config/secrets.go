package config

import (
	"net/url"
	"strings"
)

// Secrets lists every secret value in the configuration, for a
// secrets.Set: API keys, gateway tokens, the webhook secret and a password
// inside the store DSN.
func (c *Config) Secrets() []string {
	vals := make([]Secret, 0, len(c.LLM.Providers)+6)
	for _, p := range c.LLM.Providers {
		vals = append(vals, p.APIKey)
	}
	g := c.Gateways
	vals = append(vals, g.Telegram.Token, g.Telegram.Webhook.SecretToken,
		g.Discord.Token, g.Slack.BotToken, g.Slack.AppToken)
	out := make([]string, 0, len(vals)+1)
	for _, v := range vals {
		if v != "" {
			out = append(out, v.Value())
		}
	}
	if pw := dsnPassword(c.Store.DSN.Value()); pw != "" {
		out = append(out, pw)
	}
	return out
}

// dsnPassword finds the password in a URL DSN (postgres://u:pw@h/db) or a
// key=value DSN (password=pw). A sqlite file path has none.
func dsnPassword(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			return pw
		}
	}
	for _, field := range strings.Fields(dsn) {
		if k, v, ok := strings.Cut(field, "="); ok && strings.EqualFold(k, "password") {
			return strings.Trim(v, `'`)
		}
	}
	return ""
}
