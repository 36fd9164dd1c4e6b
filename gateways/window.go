package gateways

import (
	"context"
	"sync"
	"time"
)

// Limit is a platform's rate limit: at most N requests in any window of
// length Per. A zero N means no limit.
type Limit struct {
	N   int
	Per time.Duration
}

// Limits are a platform's limits as data: one for all chats together, one
// for each chat (e.g. 30 per second overall, 1 per second per
// chat).
type Limits struct {
	Global  Limit
	PerChat Limit
}

// maxIdleChats is how many chat windows a Pacer keeps before it forgets
// the idle ones (empty and not paused).
const maxIdleChats = 4096

// Pacer spaces out requests so that no window of a limit's length ever
// holds more than its N, globally and per chat, and holds them while a
// server's retry-after pause lasts. It keeps the times of the last N
// requests (a sliding window), so a burst gets N requests through at once
// and then one each time the oldest leaves the window; unlike a token
// bucket that starts full, it never lets 2N through in the first window.
// Wait delays a request; it never drops one. A Pacer is safe for
// concurrent use.
//
// Time is read with time.Now and waited with timers, so tests run it in a
// testing/synctest bubble, whose clock is exact and fake.
type Pacer struct {
	limits Limits

	mu     sync.Mutex
	global window
	chats  map[string]*window
}

// NewPacer returns a Pacer with the given limits.
func NewPacer(l Limits) *Pacer {
	return &Pacer{limits: l, chats: make(map[string]*window)}
}

// Wait blocks until a request to chat is allowed, then records it as made
// now. It returns ctx.Err() if ctx ends first.
func (p *Pacer) Wait(ctx context.Context, chat string) error {
	_, err := p.Start(ctx, chat)
	return err
}

// Start is Wait for a request whose end is known: it returns ended, to
// call once the request is answered (or failed), which moves the
// request's time in the windows from its start to then. The platform
// counts a request when it receives it, some time between the two: a
// window counted from each request's end is never short at the platform,
// however long the requests take on their way (up to one window: a
// request's slot is given to another once a window has passed since it
// started, answered or not). Calling ended again does nothing.
func (p *Pacer) Start(ctx context.Context, chat string) (ended func(), err error) {
	for {
		ended, d := p.reserve(chat, time.Now())
		if d <= 0 {
			return ended, nil
		}
		if err := Sleep(ctx, d); err != nil {
			return func() {}, err
		}
	}
}

// Pause holds every request to chat for d (a server's retry-after).
func (p *Pacer) Pause(chat string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chat(chat).pause(time.Now().Add(d))
}

// PauseAll holds every request to every chat for d (a retry-after the
// server says is global, as Discord's "global": true does).
func (p *Pacer) PauseAll(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.global.pause(time.Now().Add(d))
}

// Paused reports whether a server's retry-after pause holds requests to
// chat now (its own or every chat's). Best-effort requests outside the
// delivery layer, such as a typing indicator, skip a turn while it does:
// a request made during the pause can only lengthen it.
func (p *Pacer) Paused(chat string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.global.until.After(now) {
		return true
	}
	w, ok := p.chats[chat]
	return ok && w.until.After(now)
}

// reserve records a request to chat at now and returns ended (see
// Start) and 0, or returns how long to wait before asking again.
func (p *Pacer) reserve(chat string, now time.Time) (ended func(), wait time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.chat(chat)
	if d := max(w.wait(p.limits.PerChat, now), p.global.wait(p.limits.Global, now)); d > 0 {
		return nil, d
	}
	ci := w.record(p.limits.PerChat, now)
	gi := p.global.record(p.limits.Global, now)
	var once sync.Once
	return func() {
		once.Do(func() {
			end := time.Now()
			p.mu.Lock()
			defer p.mu.Unlock()
			w.end(ci, now, end) // w may have been forgotten (chat): then nothing waits on it
			p.global.end(gi, now, end)
		})
	}, 0
}

// chat returns the chat's window, creating it; p.mu is held.
func (p *Pacer) chat(key string) *window {
	if w, ok := p.chats[key]; ok {
		return w
	}
	if len(p.chats) >= maxIdleChats {
		now := time.Now()
		for k, w := range p.chats {
			if w.idle(p.limits.PerChat, now) {
				delete(p.chats, k)
			}
		}
	}
	w := &window{}
	p.chats[key] = w
	return w
}

// window is the times of the last requests under one limit, and a pause.
type window struct {
	times []time.Time // the last N requests' times (starts, or ends once known), in no order
	last  time.Time   // the newest request (its start or end)
	until time.Time   // paused until
}

// wait returns how long until a request fits l and no pause holds.
func (w *window) wait(l Limit, now time.Time) time.Duration {
	d := w.until.Sub(now)
	if l.N > 0 && len(w.times) >= l.N {
		d = max(d, w.times[w.oldest()].Add(l.Per).Sub(now))
	}
	return max(d, 0)
}

// oldest is the index of the earliest of w.times (not empty).
func (w *window) oldest() int {
	i := 0
	for j, t := range w.times {
		if t.Before(w.times[i]) {
			i = j
		}
	}
	return i
}

// record adds a request made at now, in place of the oldest once there
// are N, and returns its index in w.times (-1: not kept).
func (w *window) record(l Limit, now time.Time) int {
	w.last = now
	switch {
	case l.N <= 0:
		return -1
	case len(w.times) < l.N:
		w.times = append(w.times, now)
		return len(w.times) - 1
	default:
		i := w.oldest()
		w.times[i] = now
		return i
	}
}

// end moves the request recorded at index i at start to end, unless
// another took its place meanwhile.
func (w *window) end(i int, start, end time.Time) {
	if i >= 0 && i < len(w.times) && w.times[i].Equal(start) {
		w.times[i] = end
	}
	if end.After(w.last) {
		w.last = end
	}
}

func (w *window) pause(until time.Time) {
	if until.After(w.until) {
		w.until = until
	}
}

// idle reports that forgetting w changes nothing: no pause holds and no
// request is within the limit's window.
func (w *window) idle(l Limit, now time.Time) bool {
	return !w.until.After(now) && (l.N <= 0 || !w.last.Add(l.Per).After(now))
}
