package slack

import (
	"context"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
)

// threadScope is the Memory scope of the threads the bot is part of; a
// key is "<channel>:<thread ts>".
const threadScope = "slack.threads"

// repliesLimit bounds the one page of conversations.replies read to find
// whether the bot is part of a thread it does not remember: the parent
// and the oldest replies, where a bot mentioned in the thread answered.
const repliesLimit = 100

// memThreads keeps the threads in memory (no store): the newest ones.
type memThreads struct{ set *recentSet }

// Remember records key.
func (m *memThreads) Remember(_ context.Context, _, key string) error {
	m.set.add(key)
	return nil
}

// Remembered reports whether key is among the newest remembered.
func (m *memThreads) Remembered(_ context.Context, _, key string) (bool, error) {
	return m.set.has(key), nil
}

// allowed reports whether from, talking in conv, passes the allow list.
func (g *Gateway) allowed(from core.Identity, conv core.Conversation) bool {
	return g.auth == nil || g.auth.Allowed(core.Signal{Kind: core.KindMessage, Conv: conv, From: from})
}

// takePart remembers conv's thread as one the bot is part of (nothing
// for a conversation without a thread). A failure is logged: the thread
// is then looked up when a reply in it comes.
func (g *Gateway) takePart(ctx context.Context, conv core.Conversation) {
	if conv.Thread == "" {
		return
	}
	if err := g.threads.Remember(ctx, threadScope, conv.Chat+":"+conv.Thread); err != nil && ctx.Err() == nil {
		g.log.Warn().Err(err).Str("conv", conv.Key()).Msg("could not remember a thread the bot is part of")
	}
}

// partOf reports whether the bot is part of thread in channel, for a
// message from user there that does not mention it: a thread it
// remembers, or, for a sender who passes the allow list only, one where
// Slack shows a message of the bot (then remembered). Nothing a stranger
// sends is looked up or remembered.
func (g *Gateway) partOf(ctx context.Context, channel, thread, user string) bool {
	key := channel + ":" + thread
	known, err := g.threads.Remembered(ctx, threadScope, key)
	if err != nil {
		g.log.Warn().Err(err).Str("thread", key).Msg("could not read the threads the bot is part of; asking Slack")
	}
	if known {
		return true
	}
	conv := core.Conversation{Gateway: Name, Chat: channel, Thread: thread}
	if !g.allowed(identity(user), conv) || !g.botInThread(ctx, channel, thread) {
		return false
	}
	g.takePart(ctx, conv)
	return true
}

// botInThread asks Slack (conversations.replies: one page of at most
// repliesLimit messages, within LookupTimeout) whether the bot wrote in
// thread. An error counts as no, and is logged.
func (g *Gateway) botInThread(ctx context.Context, channel, thread string) bool {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.LookupTimeout)
	defer cancel()
	msgs, _, _, err := g.api.GetConversationRepliesContext(rctx, &slack.GetConversationRepliesParameters{
		ChannelID: channel, Timestamp: thread, Limit: repliesLimit,
	})
	if err != nil {
		if ctx.Err() == nil {
			g.log.Warn().Err(g.scrub(err)).Str("conv", core.Conversation{Gateway: Name, Chat: channel, Thread: thread}.Key()).
				Msg("could not ask Slack whether the bot is part of a thread; skipping a reply in it that does not mention the bot")
		}
		return false
	}
	for _, m := range msgs[:min(len(msgs), repliesLimit)] {
		if (g.botUser != "" && m.User == g.botUser) || (g.botID != "" && m.BotID == g.botID) {
			return true
		}
	}
	return false
}
