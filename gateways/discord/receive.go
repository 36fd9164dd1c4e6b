package discord

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// notSupported answers content the gateway cannot read yet.
const notSupported = "Sorry, I can read text and attachments, but stickers are not supported yet."

// onEvent decodes the dispatches the gateway handles from their raw JSON,
// so that a malformed one is logged and skipped rather than handled half
// decoded. It runs on discordgo's reading goroutine (SyncEvents): messages
// are queued for Run in order, interactions handled in the background.
func (g *Gateway) onEvent(_ *discordgo.Session, e *discordgo.Event) {
	if e == nil {
		return
	}
	switch e.Type {
	case "MESSAGE_CREATE":
		var m discordgo.Message
		if err := json.Unmarshal(e.RawData, &m); err != nil || m.ID == "" || m.ChannelID == "" || m.Author == nil {
			g.log.Warn().Int64("seq", e.Sequence).AnErr("decode", err).Msg("skipping a malformed MESSAGE_CREATE")
			return
		}
		g.enqueue(&m)
	case "INTERACTION_CREATE":
		var in discordgo.Interaction
		if err := json.Unmarshal(e.RawData, &in); err != nil || in.ID == "" || in.Token == "" {
			g.log.Warn().Int64("seq", e.Sequence).AnErr("decode", err).Msg("skipping a malformed INTERACTION_CREATE")
			return
		}
		g.onInteraction(&in)
	}
}

// enqueue hands m to Run. A full queue holds the reading goroutine: the
// gateway then misses heartbeat ACKs, reconnects and resumes, losing
// nothing.
func (g *Gateway) enqueue(m *discordgo.Message) {
	rs := g.run.Load()
	if rs == nil {
		return
	}
	select {
	case g.queue <- m:
	case <-rs.ctx.Done():
	}
}

// onMessage normalises a message into a signal for inbox. It returns an
// error only when the inbox refused it (shutting down).
func (g *Gateway) onMessage(ctx context.Context, inbox gateways.Inbox, m *discordgo.Message) error {
	if m.Author.Bot || m.Author.ID == g.self.ID || m.WebhookID != "" {
		return nil // bots, itself included, and webhooks
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return nil // joins, pins, boosts…
	}
	private := m.GuildID == ""
	if !private {
		g.guilds.set(m.ChannelID, m.GuildID)
	}
	addressed, text := g.addressed(m)
	conv, started := g.convOf(ctx, m.ChannelID, private)
	if started {
		addressed = true // a thread the bot started (an incident's) is for it
	}
	if !private && g.cfg.Guild == GuildMention && !addressed {
		return nil
	}
	var atts []core.Attachment
	if private || addressed { // a guild message's files only when the bot is addressed, even with guild: all
		atts = g.attachments(m)
	}
	if strings.TrimSpace(text) == "" {
		if !private && !addressed {
			return nil
		}
		if len(atts) == 0 {
			if len(m.StickerItems) > 0 {
				g.replyLater(conv, notSupported, m.ID)
			}
			return nil
		}
	}
	err := inbox.Submit(ctx, core.Signal{
		Kind:        core.KindMessage,
		Conv:        conv,
		From:        identity(m.Author.ID),
		Text:        text,
		Attachments: atts,
		MessageID:   m.ID,
		Private:     private,
		At:          m.Timestamp,
	})
	if gateways.Unavailable(err) {
		// Discord does not deliver a message again: the sender is to
		// send it again.
		g.log.Warn().Str("conv", conv.Key()).Err(err).Msg("message refused: the store does not answer; the sender is told to try again")
		g.replyLater(conv, gateways.UnavailableNote, m.ID)
		return nil
	}
	return err
}

func identity(userID string) core.Identity { return core.Identity(Name + ":" + userID) }

// addressed reports whether a message is for the bot: it mentions the bot,
// replies to the bot's message, or is a command ("/approve …"). It
// returns the text with the bot's mentions removed.
func (g *Gateway) addressed(m *discordgo.Message) (bool, string) {
	text, ok := m.Content, false
	tags := []string{"<@" + g.self.ID + ">", "<@!" + g.self.ID + ">"}
	// Until none is left: removing a mention nested in another, as in
	// "<@<@ID>ID>", joins the outer one. Each pass shortens the text.
	for again := true; again; {
		again = false
		for _, tag := range tags {
			if strings.Contains(text, tag) {
				ok, again = true, true
				text = strings.ReplaceAll(strings.ReplaceAll(text, tag+" ", ""), tag, "")
			}
		}
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == g.self.ID {
			ok = true
		}
	}
	if r := m.ReferencedMessage; r != nil && r.Author != nil && r.Author.ID == g.self.ID {
		ok = true
	}
	text = strings.TrimSpace(text)
	if len(text) > 1 && text[0] == '/' {
		ok = true
	}
	return ok, text
}

// replyLater sends text to conv in the background, as a reply to replyTo.
func (g *Gateway) replyLater(conv core.Conversation, text, replyTo string) {
	rs := g.run.Load()
	if rs == nil {
		return
	}
	g.goBackground(func() {
		a := core.Action{Kind: core.ActionReply, Conv: conv, Text: text, ReplyTo: replyTo}
		if _, err := g.Act(rs.ctx, a); err != nil {
			g.log.Error().Err(err).Str("conv", conv.Key()).Msg("reply failed")
		}
	})
}

// channelGuilds remembers which channels are guild channels (a reply there
// references the message it answers), up to a bound; a forgotten channel
// only loses the reference.
type channelGuilds struct {
	mu  sync.Mutex
	max int
	m   map[string]string
}

func newChannelGuilds(max int) *channelGuilds {
	return &channelGuilds{max: max, m: make(map[string]string)}
}

func (c *channelGuilds) set(channel, guild string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[channel]; !ok && len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[channel] = guild
}

func (c *channelGuilds) get(channel string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.m[channel]
	return g, ok
}
