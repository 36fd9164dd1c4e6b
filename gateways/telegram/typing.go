package telegram

import (
	"context"
	"errors"
	"net/http"
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
	thread, err := threadID(conv)
	if err != nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.typing(ctx, chat, thread)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

// typing renews the indicator until ctx ends, skipping the renewals that
// would come before the end of a 429's retry_after.
func (g *Gateway) typing(ctx context.Context, chat int64, thread int) {
	t := time.NewTicker(g.cfg.TypingEvery)
	defer t.Stop()
	var until time.Time // the end of a retry_after pause sendChatAction was given
	for {
		if time.Now().After(until) {
			if d := g.sendTyping(ctx, chat, thread); d > 0 {
				until = time.Now().Add(d)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sendTyping shows "typing…" in chat (in forum topic thread unless 0)
// once, unless a 429's retry-after pause holds the chat's deliveries: then
// it skips this renewal. It returns the retry_after of a 429 it was
// answered with, 0 otherwise.
func (g *Gateway) sendTyping(ctx context.Context, chat int64, thread int) time.Duration {
	if g.out.Paused(core.Conversation{Gateway: Name, Chat: strconv.FormatInt(chat, 10)}) {
		return 0
	}
	var err error
	if thread != 0 {
		p := tgbotapi.Params{"chat_id": strconv.FormatInt(g.follow(chat), 10), "action": tgbotapi.ChatTyping}
		err = g.callTopic(ctx, "sendChatAction", p, thread, nil)
	} else {
		rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
		_, err = g.api(rctx).Request(tgbotapi.NewChatAction(g.follow(chat), tgbotapi.ChatTyping))
		cancel()
	}
	if err == nil || ctx.Err() != nil {
		return 0
	}
	g.log.Debug().Int64("chat", chat).Err(g.scrub(err)).Msg("sendChatAction failed")
	return g.retryAfter(err)
}

// retryAfter is how long a 429 answer asks to wait, 0 for other errors.
func (g *Gateway) retryAfter(err error) time.Duration {
	var apiErr *tgbotapi.Error
	if errors.As(err, &apiErr) && apiErr.Code == http.StatusTooManyRequests && apiErr.RetryAfter > 0 {
		return time.Duration(apiErr.RetryAfter) * g.cfg.RetryAfterUnit
	}
	return 0
}
