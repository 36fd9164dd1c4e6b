package gateways

import (
	"context"
	"slices"
	"sync"
)

// convQueue gives each conversation one turn at a time, first come first
// served, so that a reply's chunks and consecutive replies keep their
// order while other conversations proceed.
type convQueue struct {
	mu    sync.Mutex
	lines map[string]*convLine // present while the key's turn is taken
}

// convLine is the callers waiting for one key, in arrival order.
type convLine struct {
	waiters []chan struct{}
}

func newConvQueue() *convQueue { return &convQueue{lines: make(map[string]*convLine)} }

// acquire waits for key's turn; the returned func ends it. If ctx ends
// first it returns ctx.Err() and takes no turn.
func (q *convQueue) acquire(ctx context.Context, key string) (func(), error) {
	release := func() { q.release(key) }
	q.mu.Lock()
	l, busy := q.lines[key]
	if !busy {
		q.lines[key] = &convLine{}
		q.mu.Unlock()
		return release, nil
	}
	turn := make(chan struct{})
	l.waiters = append(l.waiters, turn)
	q.mu.Unlock()
	select {
	case <-turn:
		return release, nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	if i := slices.Index(l.waiters, turn); i >= 0 {
		l.waiters = slices.Delete(l.waiters, i, i+1)
		q.mu.Unlock()
		return nil, ctx.Err()
	}
	q.mu.Unlock()
	release() // the turn came as ctx ended: pass it on
	return nil, ctx.Err()
}

// release hands key's turn to the next waiter, or frees it.
func (q *convQueue) release(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.lines[key]
	if len(l.waiters) == 0 {
		delete(q.lines, key)
		return
	}
	next := l.waiters[0]
	l.waiters = l.waiters[1:]
	close(next)
}
