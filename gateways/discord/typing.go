package discord

import (
	"context"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
)

// StartTyping shows "typing…" in conv, renewed every TypingEvery (Discord
// shows it for about 10 s; renewals are skipped while a 429 holds the
// channel), until stop is called or ctx ends. stop waits for the renewals
// to end and may be called more than once.
func (g *Gateway) StartTyping(ctx context.Context, conv core.Conversation) (stop func()) {
	if checkChannel(conv) != nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.typing(ctx, channelOf(conv))
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

func (g *Gateway) typing(ctx context.Context, channel string) {
	t := time.NewTicker(g.cfg.TypingEvery)
	defer t.Stop()
	for {
		g.sendTyping(ctx, channel)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sendTyping is best effort: a lost indicator is not worth a retry. It
// skips this renewal while a 429 holds the channel: the Outbox's pause of
// its messages, or discordgo's rate limiter (after a 429 on the indicator
// itself, or a global one), which would otherwise sleep without a context
// until the limit resets, and make stop wait as long.
func (g *Gateway) sendTyping(ctx context.Context, channel string) {
	if g.out.Paused(core.Conversation{Gateway: Name, Chat: channel}) || g.limited(discordgo.EndpointChannelTyping(channel)) {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	if err := g.s.ChannelTyping(channel, discordgo.WithContext(rctx)); err != nil && ctx.Err() == nil {
		g.log.Debug().Str("channel", channel).Err(g.scrub(err)).Msg("typing indicator failed")
	}
}

// limited reports whether discordgo's rate limiter would make a request on
// bucket wait now; a bucket in use by another request counts as limited.
func (g *Gateway) limited(bucket string) bool {
	b := g.s.Ratelimiter.GetBucket(bucket)
	if !b.TryLock() {
		return true
	}
	defer b.Unlock()
	return g.s.Ratelimiter.GetWaitTime(b, 1) > 0
}
