package core

import (
	"context"
	"errors"
	"sync"
)

// errUserCancelled is the cause of a turn's context cancelled by /cancel.
var errUserCancelled = errors.New("cancelled by /cancel")

// errReset is the cause of a turn's context cancelled by /reset.
var errReset = errors.New("stopped by /reset")

// runningTurns holds the cancel func of each conversation's turn in
// progress, so /cancel can stop it from outside the queue. A cancelled turn
// stays listed until it has ended: it may still be stopping its tools and
// recording what they did.
type runningTurns struct {
	mu sync.Mutex
	m  map[string]*runningTurn
}

type runningTurn struct {
	cancel    context.CancelCauseFunc
	cancelled bool // by /cancel; under runningTurns.mu

	// mu is held by each of the turn's history writes and by a /reset of
	// its conversation, so that no write lands after the reset.
	mu        sync.Mutex
	forgotten bool // by /reset: the turn's writes are dropped; under mu
}

// write runs f, one of the turn's writes to its conversation's history,
// unless /reset forgot that history since the turn began: f is then
// dropped. A nil turn (none is recorded) runs f.
func (rt *runningTurn) write(f func() error) error {
	if rt == nil {
		return f()
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.forgotten {
		return nil
	}
	return f()
}

// start derives the context of a turn of conv from parent and records it;
// the returned func ends the turn and forgets it.
func (r *runningTurns) start(parent context.Context, conv string) (context.Context, *runningTurn, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	rt := &runningTurn{cancel: cancel}
	r.mu.Lock()
	if r.m == nil {
		r.m = make(map[string]*runningTurn)
	}
	r.m[conv] = rt
	r.mu.Unlock()
	return ctx, rt, func() {
		r.mu.Lock()
		if r.m[conv] == rt {
			delete(r.m, conv)
		}
		r.mu.Unlock()
		cancel(nil)
	}
}

// cancel stops conv's turn in progress and reports whether there was one
// not cancelled yet.
func (r *runningTurns) cancel(conv string) bool {
	r.mu.Lock()
	rt := r.m[conv]
	if rt == nil || rt.cancelled {
		r.mu.Unlock()
		return false
	}
	rt.cancelled = true
	r.mu.Unlock()
	rt.cancel(errUserCancelled)
	return true
}

// forget runs reset, the forgetting of conv's history, so that nothing of
// conv's turn in progress is stored after it: it waits for a write of that
// turn under way, then marks the turn forgotten (its later writes are
// dropped) and cancels it (cause errReset) as /cancel would. It reports
// whether a turn was stopped. runningTurns.mu is held throughout, so no
// turn of conv starts before the reset is done.
func (r *runningTurns) forget(conv string, reset func() error) (stopped bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt := r.m[conv]
	if rt == nil {
		return false, reset()
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if err := reset(); err != nil {
		return false, err
	}
	rt.forgotten = true
	rt.cancel(errReset)
	return true, nil
}

// busy reports whether conv has a turn in progress, a cancelled one that
// has not ended yet included.
func (r *runningTurns) busy(conv string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[conv] != nil
}
