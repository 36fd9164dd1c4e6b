package config

import "regexp"

// credential is one key a gateway needs, and whether it is set.
type credential struct {
	key string
	set bool
}

func (g *Gateways) check(ch *checker, httpListen string) {
	g.Telegram.check(ch, httpListen)
	g.Discord.check(ch)
	g.Slack.check(ch)
}

// credentials enforces the enabling rule: "enabled: false" turns a gateway
// off; "enabled: true" needs every credential; otherwise the credentials
// must be all set or all empty.
func (ch *checker) credentials(path string, explicit *bool, creds ...credential) {
	if explicit != nil && !*explicit {
		return
	}
	var set string
	for _, c := range creds {
		if c.set && set == "" {
			set = c.key
		}
	}
	for _, c := range creds {
		switch {
		case c.set:
		case explicit != nil:
			ch.fail(path+"."+c.key, "required when %s.enabled is true", path)
		case set != "":
			ch.fail(path+"."+c.key, "required when %s.%s is set", path, set)
		}
	}
}

// telegramSecret is the shape Telegram accepts for a webhook secret token.
var telegramSecret = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

func (t *Telegram) check(ch *checker, httpListen string) {
	const p = "gateways.telegram"
	ch.credentials(p, t.Enable, credential{"token", t.Token != ""})
	if ch.required(p+".api_url", t.APIURL) {
		ch.url(p+".api_url", t.APIURL, "http", "https")
	}
	ch.ids(p+".allow", t.Allow)
	ch.oneOf(p+".mode", t.Mode, ModePolling, ModeWebhook)
	ch.oneOf(p+".group", t.Group, GroupMention, GroupAll)
	w := t.Webhook
	if w.Listen != "" {
		ch.listen(p+".webhook.listen", w.Listen)
	}
	if w.PublicURL != "" {
		ch.url(p+".webhook.public_url", w.PublicURL, "http", "https")
	}
	if w.SecretToken != "" && !telegramSecret.MatchString(w.SecretToken.Value()) {
		ch.fail(p+".webhook.secret_token", "want 1-256 characters A-Z a-z 0-9 _ -")
	}
	if t.Mode != ModeWebhook {
		return
	}
	ch.required(p+".webhook.public_url", w.PublicURL)
	if w.SecretToken == "" {
		ch.fail(p+".webhook.secret_token", "required in webhook mode: it proves updates come from Telegram")
	}
	if w.Listen == "" && httpListen == "" {
		ch.fail(p+".webhook.listen", "required when http.listen is empty")
	}
}

func (d *Discord) check(ch *checker) {
	const p = "gateways.discord"
	ch.credentials(p, d.Enable, credential{"token", d.Token != ""})
	if ch.required(p+".api_url", d.APIURL) {
		ch.url(p+".api_url", d.APIURL, "http", "https")
	}
	if d.GatewayURL != "" {
		ch.url(p+".gateway_url", d.GatewayURL, "ws", "wss")
	}
	ch.ids(p+".allow", d.Allow)
}

func (s *Slack) check(ch *checker) {
	const p = "gateways.slack"
	ch.credentials(p, s.Enable,
		credential{"bot_token", s.BotToken != ""},
		credential{"app_token", s.AppToken != ""})
	if ch.required(p+".api_url", s.APIURL) {
		ch.url(p+".api_url", s.APIURL, "http", "https")
	}
	ch.ids(p+".allow", s.Allow)
}
