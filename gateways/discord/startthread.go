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
// message's), so the incident's conversation is discord:<thread id>, and
// its replies, approval buttons and history are the thread's. The bot
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
	if err := g.threads.Remember(ctx, threadScope, ch.ID); err != nil && ctx.Err() == nil {
		g.log.Warn().Err(err).Str("thread", ch.ID).Msg("could not remember a thread the bot started; a message there then needs a mention")
	}
	return core.Conversation{Gateway: Name, Chat: ch.ID}, "", nil
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
