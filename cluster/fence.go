package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// ErrFenced is the cause of the context of a call that a Fence stopped.
var ErrFenced = errors.New("stopped: this instance could not show the database it is alive for half of store.lease_ttl, so the other instances may soon take it for a dead one")

// Fence stops this instance's approved and changing calls before another
// instance may take it for a dead one: before its approved runs may be
// marked interrupted (their instance's heartbeat older than
// store.lease_ttl) and before its workspace lease may expire (which lets
// an /undo elsewhere restore the workspace).
//
// Each renewal this instance relies on (the heartbeat, the workspace
// lease while a changing call runs) reports, once it succeeded, the time
// it began, on this process's monotonic clock (Renewed). What the
// renewal wrote expires lease_ttl after that time at the earliest,
// whatever the network did meanwhile. Once any of them is older than
// the fence's limit (lease_ttl/2), the fence trips: it cancels, with
// cause ErrFenced, every context it guards (Guard; the supervisor then
// kills a shell call's process group), and Guard gives an ended context
// until every renewal is fresh again. A renewal that succeeds after a gap
// longer than the limit (a process paused, then resumed) trips it too,
// before it counts, whether or not the watch (Run) saw the gap.
//
// A nil *Fence guards nothing: one process on its own store.
type Fence struct {
	limit time.Duration
	log   zerolog.Logger

	mu     sync.Mutex
	last   map[string]time.Time // by renewal: when its last success began
	guards map[uint64]context.CancelCauseFunc
	next   uint64
	wake   chan struct{} // a renewal changed; buffered
}

// NewFence returns a fence that trips once a renewal is older than limit,
// logging to log what it stops.
func NewFence(limit time.Duration, log zerolog.Logger) *Fence {
	return &Fence{limit: limit, log: log, last: map[string]time.Time{}, guards: map[uint64]context.CancelCauseFunc{},
		wake: make(chan struct{}, 1)}
}

// Renewed records that the renewal key, begun at start (time.Now before
// it was sent), succeeded.
func (f *Fence) Renewed(key string, start time.Time) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	prev, ok := f.last[key]
	if ok && start.Sub(prev) >= f.limit {
		f.tripLocked()
	}
	if !ok || start.After(prev) {
		f.last[key] = start
	}
	f.poke()
}

// Released says that nothing relies on the renewal key any more (the
// lease was let go): it no longer trips the fence.
func (f *Fence) Released(key string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	delete(f.last, key)
	f.mu.Unlock()
	f.poke()
}

// Guard returns a context derived from ctx that also ends, with cause
// ErrFenced, when the fence trips; it has ended already when the fence is
// tripped now. cancel releases it.
func (f *Fence) Guard(ctx context.Context) (context.Context, context.CancelFunc) {
	if f == nil {
		return context.WithCancel(ctx)
	}
	gctx, cancel := context.WithCancelCause(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, lapsed := f.deadlineLocked(time.Now()); lapsed {
		cancel(ErrFenced)
		return gctx, func() { cancel(context.Canceled) }
	}
	f.next++
	id := f.next
	f.guards[id] = cancel
	return gctx, func() {
		f.mu.Lock()
		delete(f.guards, id)
		f.mu.Unlock()
		cancel(context.Canceled)
	}
}

// Run watches the renewals until ctx ends and trips the fence when one
// has become older than the limit.
func (f *Fence) Run(ctx context.Context) error {
	if f == nil {
		return nil
	}
	for {
		f.mu.Lock()
		deadline, lapsed := f.deadlineLocked(time.Now())
		if lapsed {
			f.tripLocked()
		}
		f.mu.Unlock()
		t := time.NewTimer(time.Until(deadline))
		if lapsed || deadline.IsZero() {
			t.Stop() // nothing to watch until a renewal
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-f.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// deadlineLocked is when the oldest renewal becomes older than the limit
// (zero without renewals), and whether that is not after now; f.mu is
// held.
func (f *Fence) deadlineLocked(now time.Time) (deadline time.Time, lapsed bool) {
	for _, t := range f.last {
		if d := t.Add(f.limit); deadline.IsZero() || d.Before(deadline) {
			deadline = d
		}
	}
	return deadline, !deadline.IsZero() && !now.Before(deadline)
}

// tripLocked cancels every guarded context; f.mu is held.
func (f *Fence) tripLocked() {
	if len(f.guards) > 0 {
		f.log.Warn().Int("calls", len(f.guards)).Dur("limit", f.limit).
			Msg("cluster: the database was not reached for half of store.lease_ttl: stopping this instance's approved and changing calls before another instance takes it for dead")
	}
	for id, cancel := range f.guards {
		cancel(ErrFenced)
		delete(f.guards, id)
	}
}

// poke wakes Run.
func (f *Fence) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}
