package core

import (
	"context"
	"sync"
	"time"
)

// TypingDelay is how long the model may take to answer a message before
// the turn shows "typing…": a turn whose answer is decided sooner (a fast
// model, a command) sends no indicator, which the reply would replace at
// once (issue 34: it was one request in three of a message's). Once
// shown, the indicator stays until the turn ends, through tool calls and
// the pacer's wait.
const TypingDelay = 500 * time.Millisecond

// typing is a turn's typing indicator: started after a delay unless the
// answer is decided first.
type typing struct {
	mu      sync.Mutex
	timer   *time.Timer
	stop    func() // the indicator's, once started
	settled bool   // the answer is decided or the turn is over: start no more
}

// startTypingAfter shows typing in conv through typer once d has passed,
// unless decided or end is called first.
func startTypingAfter(ctx context.Context, typer Typer, conv Conversation, d time.Duration) *typing {
	ty := &typing{}
	ty.timer = time.AfterFunc(d, func() {
		ty.mu.Lock()
		defer ty.mu.Unlock()
		if !ty.settled && ctx.Err() == nil {
			ty.stop = typer.StartTyping(ctx, conv)
		}
	})
	return ty
}

// decided says the answer is decided: an indicator not yet shown never
// is; one shown stays until end.
func (ty *typing) decided() {
	if ty == nil {
		return
	}
	ty.mu.Lock()
	defer ty.mu.Unlock()
	ty.settled = true
	ty.timer.Stop()
}

// end stops the indicator, or keeps it from starting.
func (ty *typing) end() {
	if ty == nil {
		return
	}
	ty.decided()
	ty.mu.Lock()
	stop := ty.stop
	ty.mu.Unlock()
	if stop != nil {
		stop()
	}
}
