package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// chunkLimit is the size replies are split to, in characters: below
// Discord's 2000, with room to spare.
const chunkLimit = 1990

// newOutbox builds the gateway's delivery layer from its configuration.
func (g *Gateway) newOutbox() (*gateways.Outbox, error) {
	out, err := gateways.NewOutbox(gateways.OutboxConfig{
		Limit:    chunkLimit,
		Pace:     g.cfg.Pace,
		Backoff:  g.cfg.Backoff,
		RetryFor: g.cfg.RetryFor,
		Classify: classify,
		Log:      g.log,
		Metrics:  g.delivery,
		Shared:   g.shared,
		Sender:   Name + ":" + g.self.ID,
	})
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	return out, nil
}

// classify says what a failed request means. discordgo returns a 429 as a
// RateLimitError (the session does not sleep on it) carrying the JSON
// retry_after; it has already retried a 502 itself. The global flag of a
// 429 is not in that error, but discordgo's own rate limiter holds every
// route after a response with X-RateLimit-Global, so the pause here is
// the channel's.
func classify(err error) gateways.Failure {
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) && rl.RateLimit != nil && rl.TooManyRequests != nil {
		return gateways.Failure{Verdict: gateways.RetryAfter, After: rl.RetryAfter}
	}
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil {
		code := rest.Response.StatusCode
		switch {
		case code == http.StatusTooManyRequests:
			return gateways.Failure{Verdict: gateways.RetryAfter}
		case code >= 500, code == http.StatusRequestTimeout:
			return gateways.Failure{Verdict: gateways.Transient}
		default:
			return gateways.Failure{Verdict: gateways.Permanent}
		}
	}
	return gateways.Failure{Verdict: gateways.Transient} // network, timeout, malformed answer
}

// Act delivers an ActionReply: split, paced and retried by the delivery
// layer. A reply to a slash command answers its interaction (only the
// invoker sees it); a reply to a guild message references it. It returns
// an error when a chunk finally could not be delivered.
func (g *Gateway) Act(ctx context.Context, a core.Action) (core.Result, error) {
	if a.Kind != core.ActionReply {
		return core.Result{}, fmt.Errorf("discord: cannot act on a %s action", a.Kind)
	}
	if err := checkChannel(a.Conv); err != nil {
		return core.Result{}, err
	}
	if in := g.slash.get(a.ReplyTo); in != nil {
		if err := g.answerSlash(ctx, a, in); err != nil {
			return core.Result{}, fmt.Errorf("discord: reply to %s: %w", a.Conv.Key(), err)
		}
		return core.Result{}, nil
	}
	if _, err := g.reply(ctx, a, nil); err != nil {
		return core.Result{}, fmt.Errorf("discord: reply to %s: %w", a.Conv.Key(), err)
	}
	return core.Result{}, nil
}

// checkChannel checks that conv names a channel id (and a thread's).
func checkChannel(conv core.Conversation) error {
	if conv.Gateway != Name || !snowflake(conv.Chat) || conv.Thread != "" && !snowflake(conv.Thread) {
		return fmt.Errorf("discord: conversation %s: not a discord channel", conv.Key())
	}
	return nil
}

// channelOf is the channel conv's messages go to: its thread, a channel
// of its own on Discord, or else its channel.
func channelOf(conv core.Conversation) string {
	if conv.Thread != "" {
		return conv.Thread
	}
	return conv.Chat
}

// mentions is the allowed_mentions of every message the bot sends: users
// named as <@id> are pinged, @everyone, @here and roles never are, so
// neither a model nor quoted text can ping a whole server.
func mentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{
		Parse:       []discordgo.AllowedMentionType{discordgo.AllowedMentionTypeUsers},
		RepliedUser: true,
	}
}

// reference is the reference of a reply to the message replyTo in
// channel: nil outside a guild channel (a DM reply needs none) or without
// a message to answer.
func (g *Gateway) reference(channel, replyTo string) *discordgo.MessageReference {
	guild, ok := g.guilds.get(channel)
	if !ok || replyTo == "" || !snowflake(replyTo) {
		return nil
	}
	no := false
	return &discordgo.MessageReference{MessageID: replyTo, ChannelID: channel, GuildID: guild, FailIfNotExists: &no}
}

// reply sends a.Text to its channel through the delivery layer and
// returns the ids of the messages sent. The first chunk references
// a.ReplyTo in a guild channel; rows, when given, go on the last chunk.
func (g *Gateway) reply(ctx context.Context, a core.Action, rows []discordgo.MessageComponent) ([]string, error) {
	channel := channelOf(a.Conv)
	ref := g.reference(channel, a.ReplyTo)
	return g.out.Reply(ctx, a.Conv, a.Text, func(ctx context.Context, c gateways.Chunk) (string, error) {
		msg := &discordgo.MessageSend{Content: c.Text, AllowedMentions: mentions()}
		if c.Index == 0 {
			msg.Reference = ref
		}
		if c.Last() {
			msg.Components = rows
		}
		return g.send(ctx, channel, msg)
	})
}

// send makes one attempt at creating msg in channel, with the send timeout,
// and returns the message's id.
func (g *Gateway) send(ctx context.Context, channel string, msg *discordgo.MessageSend) (string, error) {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	m, err := g.s.ChannelMessageSendComplex(channel, msg, discordgo.WithContext(rctx))
	if err != nil {
		return "", g.scrub(err)
	}
	return m.ID, nil
}
