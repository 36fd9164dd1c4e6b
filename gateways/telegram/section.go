package telegram

import (
	"context"
	"fmt"
	"strings"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// Spec is the Telegram gateway's entry in the gateway table.
func Spec() confkit.Spec {
	return confkit.Spec{
		Name:        Name,
		New:         func() confkit.Section { return NewSection() },
		EnvPrefixes: []string{"TELEGRAM_"},
		Setup: &confkit.Setup{Title: "Telegram", URLKey: "api_url", Secrets: []confkit.SetupSecret{
			{Key: "token", Env: "TELEGRAM_BOT_TOKEN", Prompt: "Telegram bot token (from @BotFather: /newbot)"},
		}},
	}
}

// Section is the gateways.telegram configuration section. Its yaml keys are
// part of the product's contract.
type Section struct {
	// Enable is the "enabled" key as written; nil when absent. Use Enabled.
	Enable *bool          `yaml:"enabled"`
	Token  confkit.Secret `yaml:"token"`
	// APIURL is the Bot API server (self-hosted servers, fakes).
	APIURL string `yaml:"api_url"`
	// AllowList lists who may talk to the bot (user or chat ids).
	AllowList []string `yaml:"allow"`
	// PairingOn hands a pairing code to a stranger who writes in a direct
	// message, for an approver's /pair (gateways.telegram.pairing).
	PairingOn bool `yaml:"pairing"`
	// Mode is ModePolling or ModeWebhook.
	Mode    string         `yaml:"mode"`
	Webhook WebhookSection `yaml:"webhook"`
	// Group is GroupMention or GroupAll.
	Group string `yaml:"group"`
}

// WebhookSection is gateways.telegram.webhook.
type WebhookSection struct {
	// Listen is the webhook server's host:port; empty serves it on http.listen.
	Listen string `yaml:"listen"`
	// PublicURL is the URL Telegram posts updates to; required in webhook mode.
	PublicURL string `yaml:"public_url"`
	// SecretToken is checked on every update (X-Telegram-Bot-Api-Secret-Token);
	// required in webhook mode: 1-256 characters A-Z a-z 0-9 _ -.
	SecretToken confkit.Secret `yaml:"secret_token"`
}

var _ gateways.Section = (*Section)(nil)

// NewSection returns the section's defaults.
func NewSection() *Section {
	return &Section{APIURL: DefaultAPIURL, Mode: ModePolling, Group: GroupMention}
}

// Enabled reports whether the gateway runs: credentials set and not disabled.
func (s *Section) Enabled() bool { return confkit.Enabled(s.Enable, s.Token != "") }

// tokenKey names the bot token's key and the variable the shipped
// configuration takes it from, for doctor's lines.
const tokenKey = "gateways.telegram.token (TELEGRAM_BOT_TOKEN)"

// tokenShape reports whether tok has the shape of a bot token as
// @BotFather gives it: the bot's id, a colon and 35 characters
// (123456789:AAH…).
func tokenShape(tok string) bool {
	id, key, ok := strings.Cut(tok, ":")
	return ok && textutil.Shape(id, 1, 20, textutil.Digits) && textutil.Shape(key, 35, 35, textutil.Word)
}

// secretShape reports whether s has the shape Telegram accepts for a
// webhook secret token.
func secretShape(s string) bool { return textutil.Shape(s, 1, 256, textutil.Word) }

// Check validates the section.
func (s *Section) Check(c *confkit.Checker, g confkit.Globals) {
	c.Credentials(s.Enable, confkit.Credential{Key: "token", Set: s.Token != ""})
	if c.Required("api_url", s.APIURL) {
		c.URL("api_url", s.APIURL, "http", "https")
	}
	c.IDs("allow", s.AllowList)
	c.OneOf("mode", s.Mode, ModePolling, ModeWebhook)
	c.OneOf("group", s.Group, GroupMention, GroupAll)
	w := s.Webhook
	if w.Listen != "" {
		c.Listen("webhook.listen", w.Listen)
	}
	if w.PublicURL != "" {
		c.URL("webhook.public_url", w.PublicURL, "http", "https")
	}
	if w.SecretToken != "" && !secretShape(w.SecretToken.Value()) {
		c.Fail("webhook.secret_token", "want 1-256 characters A-Z a-z 0-9 _ -")
	}
	if s.Mode != ModeWebhook {
		return
	}
	c.Required("webhook.public_url", w.PublicURL)
	if w.SecretToken == "" {
		c.Fail("webhook.secret_token", "required in webhook mode: it proves updates come from Telegram")
	}
	if w.Listen == "" && g.HTTPListen == "" {
		c.Fail("webhook.listen", "required when http.listen is empty")
	}
}

// Secrets returns the bot token and the webhook secret.
func (s *Section) Secrets() []confkit.Secret {
	return []confkit.Secret{s.Token, s.Webhook.SecretToken}
}

// URLs returns the API and webhook URLs.
func (s *Section) URLs() []string { return []string{s.APIURL, s.Webhook.PublicURL} }

// Allow returns gateways.telegram.allow.
func (s *Section) Allow() []string { return s.AllowList }

// Pairs returns gateways.telegram.pairing.
func (s *Section) Pairs() bool { return s.PairingOn }

// Doctor says whether the gateway runs and who may talk to it; a token
// without the shape of a bot token is a problem.
func (s *Section) Doctor() gateways.Status {
	if !s.Enabled() {
		return gateways.Status{Lines: []string{Name + ": disabled (set " + tokenKey + " to enable)"}}
	}
	st := gateways.Status{Runs: true, Lines: []string{Name + ": enabled; who may talk: " + gateways.WhoMayTalk(s.AllowList)}}
	if !tokenShape(s.Token.Value()) {
		// Telegram would refuse it at start-up; the token is not shown.
		st.Problems = append(st.Problems, tokenKey+": not a Telegram bot token (want the bot's id, a colon and 35 characters, 123456789:AAH…, as @BotFather gives it)")
	}
	return st
}

// Warnings returns none: every valid section runs.
func (s *Section) Warnings() []string { return nil }

// Build constructs the gateway; it checks the token with getMe. In webhook
// mode without its own listen address, the webhook is mounted on
// http.listen.
func (s *Section) Build(ctx context.Context, d gateways.Deps) (gateways.Gateway, error) {
	return s.build(ctx, d, nil)
}

// Prepare starts getMe in the background and returns the section to build
// instead, whose Build waits for its answer (gateways.Preparer): the
// request then overlaps the rest of the start-up. A disabled section, or
// one New would refuse, is returned as it is.
func (s *Section) Prepare(ctx context.Context, d gateways.Deps) gateways.Section {
	if !s.Enabled() {
		return s
	}
	tc, err := s.config(d).withDefaults()
	if err != nil {
		return s // Build says why
	}
	return &prepared{Section: s, conn: dial(ctx, tc)}
}

// prepared is a Section whose getMe is under way.
type prepared struct {
	*Section
	conn *connecting
}

// Build constructs the gateway with the getMe under way.
func (p *prepared) Build(ctx context.Context, d gateways.Deps) (gateways.Gateway, error) {
	return p.Section.build(ctx, d, p.conn)
}

// config is the gateway's settings for the section.
func (s *Section) config(d gateways.Deps) Config {
	tc := Config{
		Token:      s.Token.Value(),
		APIURL:     s.APIURL,
		Mode:       s.Mode,
		Group:      s.Group,
		HTTPClient: d.HTTPClient,

		MaxFileBytes: d.MaxAttachment,
		Webhook: Webhook{
			Listen:      s.Webhook.Listen,
			PublicURL:   s.Webhook.PublicURL,
			SecretToken: s.Webhook.SecretToken.Value(),
		},
	}
	if d.Tune != nil {
		d.Tune(&tc)
	}
	return tc
}

// build constructs the gateway, with conn the getMe under way (nil: New
// asks it).
func (s *Section) build(ctx context.Context, d gateways.Deps, conn *connecting) (gateways.Gateway, error) {
	if !s.Enabled() {
		return nil, nil
	}
	tc := s.config(d)
	if tc.Mode == ModeWebhook && tc.Webhook.Listen == "" && (d.HTTPListen == "" || d.Mount == nil) {
		return nil, fmt.Errorf("gateways.telegram.webhook.listen: empty, and http.listen is empty too: nothing would serve the webhook")
	}
	if conn != nil && tc.HTTPClient == nil {
		tc.HTTPClient = conn.client // the connection getMe opened serves the polls
	}
	gw, err := New(ctx, tc, Deps{Log: d.Log, Cursors: d.Cursors, Parking: d.Parking, Approvals: d.Approvals, Metrics: d.Metrics,
		Lease: d.Lease, Shared: d.Shared, connecting: conn})
	if err != nil {
		return nil, fmt.Errorf("gateways.telegram: %w", err)
	}
	if tc.Mode == ModeWebhook && tc.Webhook.Listen == "" {
		d.Mount("POST "+gw.WebhookPath(), gw.WebhookHandler())
	}
	return gw, nil
}
