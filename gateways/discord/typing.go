package discord

import (
	"context"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
)

// StartTyping shows "typing…" in conv, renewed every TypingEvery (Discord
// shows it for about 10 s), until stop is called or ctx ends. stop waits
// for the renewals to end and may be called more than once.
func (g *Gateway) StartTyping(ctx context.Context, conv core.Conversation) (stop func()) {
	if checkChannel(conv) != nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.typing(ctx, conv.Chat)
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

// sendTyping is best effort: a lost indicator is not worth a retry.
func (g *Gateway) sendTyping(ctx context.Context, channel string) {
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	if err := g.s.ChannelTyping(channel, discordgo.WithContext(rctx)); err != nil && ctx.Err() == nil {
		g.log.Debug().Str("channel", channel).Err(g.scrub(err)).Msg("typing indicator failed")
	}
}
