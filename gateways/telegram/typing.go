package telegram

import (
	"context"
	"strconv"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gatehouse-bot/gatehouse/core"
)

// StartTyping shows "typing…" in conv, renewed every TypingEvery (Telegram
// shows it for about 5 s), until stop is called or ctx ends. stop waits
// for the renewals to end and may be called more than once.
func (g *Gateway) StartTyping(ctx context.Context, conv core.Conversation) (stop func()) {
	chat, err := strconv.ParseInt(conv.Chat, 10, 64)
	if err != nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.typing(ctx, chat)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

func (g *Gateway) typing(ctx context.Context, chat int64) {
	t := time.NewTicker(g.cfg.TypingEvery)
	defer t.Stop()
	for {
		g.sendTyping(ctx, chat)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sendTyping shows "typing…" in chat once, unless a 429's retry-after
// pause holds the chat's deliveries: then it skips this renewal.
func (g *Gateway) sendTyping(ctx context.Context, chat int64) {
	if g.out.Paused(core.Conversation{Gateway: Name, Chat: strconv.FormatInt(chat, 10)}) {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
	defer cancel()
	if _, err := g.api(rctx).Request(tgbotapi.NewChatAction(chat, tgbotapi.ChatTyping)); err != nil && ctx.Err() == nil {
		g.log.Debug().Int64("chat", chat).Err(g.scrub(err)).Msg("sendChatAction failed")
	}
}
