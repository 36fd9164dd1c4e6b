package core

import (
	"context"
	"errors"
	"sync"
)

// errUserCancelled is the cause of a turn's context cancelled by /cancel.
var errUserCancelled = errors.New("cancelled by /cancel")

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
}

// start derives the context of a turn of conv from parent and records it;
// the returned func ends the turn and forgets it.
func (r *runningTurns) start(parent context.Context, conv string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	rt := &runningTurn{cancel: cancel}
	r.mu.Lock()
	if r.m == nil {
		r.m = make(map[string]*runningTurn)
	}
	r.m[conv] = rt
	r.mu.Unlock()
	return ctx, func() {
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

// busy reports whether conv has a turn in progress, a cancelled one that
// has not ended yet included.
func (r *runningTurns) busy(conv string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[conv] != nil
}
