package discord

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// slashKeep is how long a slash command's interaction answers the replies
// to it: Discord accepts follow-ups for 15 minutes.
const slashKeep = 14 * time.Minute

// slashPrefix starts the MessageID of a signal made from a slash command.
const slashPrefix = "slash:"

// commands are the application commands registered at start, so that
// /approve, /deny and /pending appear in Discord's command picker.
func commands() []*discordgo.ApplicationCommand {
	token := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionString, Name: "token",
		Description: "The request's token, e.g. K7Q2MX9P", Required: true}
	return []*discordgo.ApplicationCommand{
		{Name: "approve", Description: "Approve a held action", Options: []*discordgo.ApplicationCommandOption{token,
			{Type: discordgo.ApplicationCommandOptionBoolean, Name: "always", Description: "Also allow the same call from now on"},
			{Type: discordgo.ApplicationCommandOptionString, Name: "for", Description: "Also allow identical calls in its conversation for this long (1m to 24h, e.g. 30m)"}}},
		{Name: "deny", Description: "Deny a held action", Options: []*discordgo.ApplicationCommandOption{token,
			{Type: discordgo.ApplicationCommandOptionString, Name: "reason", Description: "Why (shown to the requester)"}}},
		{Name: "pending", Description: "List the actions waiting for approval"},
	}
}

// registerCommands registers the commands for app, in cfg.GuildID or
// globally. A transient failure (5xx, network, timeout) is tried again
// with backoff until ctx ends; a refusal (another 4xx) is logged and not
// retried. Typed commands keep working meanwhile.
func (g *Gateway) registerCommands(ctx context.Context, app string) {
	scope := "global"
	if g.cfg.GuildID != "" {
		scope = "guild " + g.cfg.GuildID
	}
	for attempt := 0; ; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
		_, err := g.s.ApplicationCommandBulkOverwrite(app, g.cfg.GuildID, commands(),
			discordgo.WithContext(rctx), discordgo.WithRetryOnRatelimit(true))
		cancel()
		if err == nil {
			g.log.Info().Str("scope", scope).Msg("slash commands registered: /approve /deny /pending")
			return
		}
		if ctx.Err() != nil {
			return
		}
		if classify(err).Verdict == gateways.Permanent {
			g.log.Warn().Str("scope", scope).Err(g.scrub(err)).Msg("cannot register the slash commands; typed commands still work")
			return
		}
		g.log.Warn().Str("scope", scope).Int("attempt", attempt+1).Err(g.scrub(err)).Msg("cannot register the slash commands yet; trying again (typed commands work meanwhile)")
		if gateways.Sleep(ctx, g.cfg.Backoff.Next(attempt)) != nil {
			return
		}
	}
}

// onSlash handles a slash command: it acknowledges it first (a deferred,
// ephemeral answer: "thinking…"; one that cannot be acknowledged is
// dropped, as for a press), then submits the same text a typed
// command would be ("/approve TOKEN always") as a message from the
// invoking user. The engine's reply to it answers the interaction (see
// Act), so only the invoker sees it.
func (g *Gateway) onSlash(ctx context.Context, inbox gateways.Inbox, in *discordgo.Interaction) {
	if !g.ack(ctx, in, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}) {
		return // Discord shows its invoker that it failed: it does nothing
	}
	u := invoker(in)
	data, ok := in.Data.(discordgo.ApplicationCommandInteractionData)
	if u == nil || u.Bot || !ok || in.ChannelID == "" {
		g.answerOriginal(ctx, in, "This command cannot be used here.")
		return
	}
	text, problem := commandText(data)
	if problem != "" {
		g.answerOriginal(ctx, in, problem)
		return
	}
	if in.GuildID != "" {
		g.guilds.set(in.ChannelID, in.GuildID)
	}
	key := slashPrefix + in.ID
	g.slash.add(key, in)
	conv, _ := g.convOf(ctx, in.ChannelID, in.GuildID == "")
	err := inbox.Submit(ctx, core.Signal{
		Kind:      core.KindMessage,
		Conv:      conv,
		From:      identity(u.ID),
		Text:      text,
		MessageID: key,
		Private:   in.GuildID == "",
		At:        time.Now(),
	})
	if gateways.Unavailable(err) {
		g.answerOriginal(ctx, in, gateways.UnavailableNote)
		return
	}
	if err != nil && ctx.Err() == nil {
		g.log.Warn().Err(err).Msg("slash command not handed over")
	}
}

// tokenShape reports whether token may be an approval token in a slash
// command (it is normalised and checked again by the broker).
func tokenShape(token string) bool { return textutil.Shape(token, 1, 64, textutil.Word) }

// commandText is the typed command a slash command stands for, or the
// problem with it (for its invoker).
func commandText(d discordgo.ApplicationCommandInteractionData) (text, problem string) {
	opts := map[string]*discordgo.ApplicationCommandInteractionDataOption{}
	for _, o := range d.Options {
		if o != nil {
			opts[o.Name] = o
		}
	}
	str := func(name string) string {
		if o := opts[name]; o != nil {
			if s, ok := o.Value.(string); ok {
				return s
			}
		}
		return ""
	}
	switch d.Name {
	case "pending":
		return "/pending", ""
	case "approve", "deny":
	default:
		return "", "Unknown command /" + oneLine(d.Name, 32) + "."
	}
	token := strings.TrimSpace(str("token"))
	if !tokenShape(token) {
		return "", "That is not a request token: use the one in the request (e.g. K7Q2MX9P)."
	}
	text = "/" + d.Name + " " + token
	if o := opts["always"]; d.Name == "approve" && o != nil {
		if b, ok := o.Value.(bool); ok && b {
			text += " always"
		}
	}
	if f := strings.Fields(oneLine(str("for"), 16)); d.Name == "approve" && len(f) > 0 {
		text += " for " + strings.Join(f, " ") // the broker checks the duration
	}
	if r := oneLine(str("reason"), 500); d.Name == "deny" && r != "" {
		text += " " + r
	}
	return text, ""
}

// oneLine makes s one line of printable text, at most n characters.
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n])
	}
	return s
}

// answerOriginal fills in the deferred answer of an interaction.
func (g *Gateway) answerOriginal(ctx context.Context, in *discordgo.Interaction, text string) {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	if _, err := g.s.InteractionResponseEdit(in, &discordgo.WebhookEdit{Content: &text, AllowedMentions: mentions()},
		discordgo.WithContext(rctx)); err != nil && ctx.Err() == nil {
		g.log.Warn().Str("interaction", in.ID).Err(g.scrub(err)).Msg("cannot answer an interaction")
	}
}

// answerSlash delivers a reply to a slash command through the delivery
// layer: the first chunk fills in the deferred answer, later chunks (and
// later replies) are ephemeral follow-ups.
func (g *Gateway) answerSlash(ctx context.Context, a core.Action, e *slashEntry) error {
	_, err := g.out.ReplyPrivate(ctx, a.Conv, a.Text, func(ctx context.Context, c gateways.Chunk) (string, error) {
		rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
		defer cancel()
		var m *discordgo.Message
		var err error
		if e.claimOriginal() {
			text := c.Text
			m, err = g.s.InteractionResponseEdit(e.in, &discordgo.WebhookEdit{Content: &text, AllowedMentions: mentions()}, discordgo.WithContext(rctx))
			if err != nil {
				e.releaseOriginal()
			}
		} else {
			p := &discordgo.WebhookParams{Content: c.Text, Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: mentions()}
			m, err = g.s.FollowupMessageCreate(e.in, true, p, discordgo.WithContext(rctx))
		}
		if err != nil {
			return "", g.scrub(err)
		}
		if m == nil {
			return "", nil
		}
		return m.ID, nil
	})
	return err
}

// slashEntry is a slash command whose replies answer its interaction.
type slashEntry struct {
	in       *discordgo.Interaction
	at       time.Time
	mu       sync.Mutex
	original bool // the deferred answer was filled in
}

func (e *slashEntry) claimOriginal() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.original {
		return false
	}
	e.original = true
	return true
}

func (e *slashEntry) releaseOriginal() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.original = false
}

// slashBook remembers recent slash commands by their signal's MessageID.
type slashBook struct {
	mu sync.Mutex
	m  map[string]*slashEntry
}

func newSlashBook() *slashBook { return &slashBook{m: make(map[string]*slashEntry)} }

func (b *slashBook) add(key string, in *discordgo.Interaction) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, e := range b.m {
		if now.Sub(e.at) > slashKeep {
			delete(b.m, k)
		}
	}
	b.m[key] = &slashEntry{in: in, at: now}
}

// get returns the live entry for a reply's ReplyTo, or nil.
func (b *slashBook) get(replyTo string) *slashEntry {
	if !strings.HasPrefix(replyTo, slashPrefix) {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.m[replyTo]
	if e == nil || time.Since(e.at) > slashKeep {
		return nil
	}
	return e
}
