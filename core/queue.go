package core

import (
	"context"
	"errors"
	"sync"
)

// ErrStopped is returned by Submit once the Engine stops accepting input.
var ErrStopped = errors.New("core: engine stopped")

// convQueue is one conversation's ordered queue. While it has work
// (running), it is in the slots' line once, and one slot at a time takes
// its signals in order.
type convQueue struct {
	items   []Signal
	running bool
	space   chan struct{} // closed when an item is taken; made lazily by waiters
}

// queues owns the per-conversation queues and counts unfinished signals for
// waitIdle. A full queue makes push wait: input is delayed, never dropped.
type queues struct {
	size int

	mu       sync.Mutex
	m        map[string]*convQueue
	inflight int // queued or being processed
	idle     []chan struct{}
	closed   bool
}

func newQueues(size int) *queues {
	return &queues{size: size, m: make(map[string]*convQueue)}
}

// push appends s to its conversation's queue, waiting while the queue is
// full. It reports whether the caller must start a drainer for key.
func (qs *queues) push(ctx context.Context, key string, s Signal) (start bool, err error) {
	for {
		qs.mu.Lock()
		if qs.closed {
			qs.mu.Unlock()
			return false, ErrStopped
		}
		q := qs.m[key]
		if q == nil {
			q = &convQueue{}
			qs.m[key] = q
		}
		if len(q.items) < qs.size {
			q.items = append(q.items, s)
			qs.inflight++
			start = !q.running
			q.running = true
			qs.mu.Unlock()
			return start, nil
		}
		if q.space == nil {
			q.space = make(chan struct{})
		}
		wait := q.space
		qs.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// pop takes the oldest signal of key's queue. When the queue is empty it
// removes it and reports false: the next push starts it again.
func (qs *queues) pop(key string) (Signal, bool) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.m[key]
	if len(q.items) == 0 {
		delete(qs.m, key)
		return Signal{}, false
	}
	s := q.items[0]
	q.items[0] = Signal{}
	q.items = q.items[1:]
	if q.space != nil {
		close(q.space)
		q.space = nil
	}
	return s, true
}

// begin counts a signal handled outside the queues (a command) as in
// flight until finish, so waitIdle and shutdown wait for it too.
func (qs *queues) begin() error {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.closed {
		return ErrStopped
	}
	qs.inflight++
	return nil
}

// finish marks one popped (or begun) signal processed.
func (qs *queues) finish() {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.inflight--
	if qs.inflight == 0 {
		for _, ch := range qs.idle {
			close(ch)
		}
		qs.idle = nil
	}
}

// waitIdle blocks until no signal is queued or in progress, or ctx ends.
func (qs *queues) waitIdle(ctx context.Context) error {
	qs.mu.Lock()
	if qs.inflight == 0 {
		qs.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	qs.idle = append(qs.idle, ch)
	qs.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close stops accepting input; queued signals are still drained.
func (qs *queues) close() {
	qs.mu.Lock()
	qs.closed = true
	qs.mu.Unlock()
}
