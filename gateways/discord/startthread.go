package discord

import (
	"context"
	"errors"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

var _ core.ThreadStarter = (*Gateway)(nil)

// threadScope is the Memory scope of the threads the bot started; a key
// is the thread's channel id.
const threadScope = "discord.threads"

// threadArchive is the auto-archive duration of the threads the bot
// starts, in minutes: three days, Discord's longest without boosts but
// one (an incident's thread stays open over a weekend's night).
const threadArchive = 4320

// maxThreadName is Discord's longest thread name, in characters.
const maxThreadName = 100

// StartThread posts text in conv's channel and starts a thread from that
// message: on Discord a thread is a channel of its own (its id the
// message's), where the incident's conversation discord:<channel>:<thread>
// sends its replies and approval buttons, and people's messages there are
// keyed the same (convOf). The bot
// remembers the thread as one it started, where a message needs no
// mention to reach it. Where Discord refuses the thread for good (a
// missing permission), the incident stays in conv as a reply chain under
// the message (replyTo). The text is sent once (ReplyPrivate: never written
// to the shared outbox, whose resumption could post a second parent),
// with no mention pinging anyone.
func (g *Gateway) StartThread(ctx context.Context, conv core.Conversation, text string) (core.Conversation, string, error) {
	if err := checkChannel(conv); err != nil {
		return core.Conversation{}, "", err
	}
	ids, err := g.out.ReplyPrivate(ctx, conv, text, func(ctx context.Context, c gateways.Chunk) (string, error) {
		return g.send(ctx, conv.Chat, &discordgo.MessageSend{Content: c.Text, AllowedMentions: &discordgo.MessageAllowedMentions{}})
	})
	if err != nil {
		return core.Conversation{}, "", fmt.Errorf("discord: start thread in %s: %w", conv.Key(), err)
	}
	if len(ids) == 0 || ids[0] == "" {
		return core.Conversation{}, "", fmt.Errorf("discord: start thread in %s: no message id", conv.Key())
	}
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	ch, err := g.s.MessageThreadStartComplex(conv.Chat, ids[0], &discordgo.ThreadStart{Name: gateways.ThreadName(text, maxThreadName), AutoArchiveDuration: threadArchive},
		discordgo.WithContext(rctx))
	if err != nil && classify(err).Verdict == gateways.Permanent {
		// Refused for good (no Create Public Threads permission, a DM):
		// the incident runs in the channel as a reply chain under the
		// headline, rather than a headline posted again at every retry.
		g.log.Warn().Err(g.scrub(err)).Str("conv", conv.Key()).Msg("could not start a thread; the incident runs as a reply chain under its first message")
		if _, known := g.guilds.get(conv.Chat); !known {
			g.guilds.set(conv.Chat, "") // its replies reference the headline
		}
		return conv, ids[0], nil
	}
	if err != nil {
		return core.Conversation{}, "", fmt.Errorf("discord: start thread in %s: %w", conv.Key(), g.scrub(err))
	}
	if ch == nil || !snowflake(ch.ID) {
		return core.Conversation{}, "", errors.New("discord: start thread: no thread id in the answer")
	}
	if ch.GuildID != "" {
		g.guilds.set(ch.ID, ch.GuildID)
	}
	g.parents.set(ch.ID, conv.Chat)
	if err := g.threads.Remember(ctx, threadScope, ch.ID); err != nil && ctx.Err() == nil {
		g.log.Warn().Err(err).Str("thread", ch.ID).Msg("could not remember a thread the bot started; a message there then needs a mention")
	}
	return core.Conversation{Gateway: Name, Chat: conv.Chat, Thread: ch.ID}, "", nil
}

// convOf is the conversation of a message or interaction in channel: in
// a thread the bot started, discord:<parent>:<thread>, the conversation
// its incident runs in (a profile of the parent channel applies to it, as
// to a Slack thread); elsewhere discord:<channel>. started reports such a
// thread. A thread's parent comes from the one remembered, or else from
// Discord (GET /channels/<thread>, after a restart or on another
// instance); a failed lookup is logged and keys the thread on its own.
func (g *Gateway) convOf(ctx context.Context, channel string, private bool) (conv core.Conversation, started bool) {
	conv = core.Conversation{Gateway: Name, Chat: channel}
	if private {
		return conv, false
	}
	if parent, ok := g.parents.get(channel); ok {
		return core.Conversation{Gateway: Name, Chat: parent, Thread: channel}, true
	}
	if !g.startedThread(ctx, channel) {
		return conv, false
	}
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	ch, err := g.s.Channel(channel, discordgo.WithContext(rctx))
	if err != nil || ch == nil || !snowflake(ch.ParentID) {
		g.log.Warn().AnErr("error", g.scrub(err)).Str("thread", channel).Msg("could not find the channel of a thread the bot started; its messages are keyed on the thread alone")
		return conv, true
	}
	g.parents.set(channel, ch.ParentID)
	return core.Conversation{Gateway: Name, Chat: ch.ParentID, Thread: channel}, true
}

// startedThread reports whether channel is a thread the bot started. An
// error counts as no, and is logged.
func (g *Gateway) startedThread(ctx context.Context, channel string) bool {
	ok, err := g.threads.Remembered(ctx, threadScope, channel)
	if err != nil && ctx.Err() == nil {
		g.log.Warn().Err(err).Str("thread", channel).Msg("could not read the threads the bot started")
	}
	return ok
}

// memThreads keeps the threads the bot started in memory (no store), up
// to a bound past which they are forgotten at once.
type memThreads struct{ set *channelGuilds }

// Remember records key.
func (m memThreads) Remember(_ context.Context, _, key string) error {
	m.set.set(key, "")
	return nil
}

// Remembered reports whether key is remembered.
func (m memThreads) Remembered(_ context.Context, _, key string) (bool, error) {
	_, ok := m.set.get(key)
	return ok, nil
}
