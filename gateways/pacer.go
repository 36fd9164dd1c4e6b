package gateways

import (
	"context"
	"sync"
	"time"
)

// Rate is a token bucket: one send every Every on average, up to Burst in
// quick succession. A zero Every means no limit.
type Rate struct {
	Every time.Duration
	Burst int // at least 1
}

// PacerConfig sets a Pacer's limits: one bucket per chat, one for all.
type PacerConfig struct {
	PerChat Rate
	Global  Rate
}

// maxIdleBuckets is how many chat buckets a Pacer keeps before it forgets
// the idle ones (full and not paused).
const maxIdleBuckets = 4096

// Pacer spaces out sends to respect a platform's per-chat and global rate
// limits and the pauses the server asks for (HTTP 429 retry-after). Wait
// delays a send; it never drops one. A Pacer is safe for concurrent use.
//
// A pause holds one chat only: Telegram's 429 does not say whether a
// global limit was hit, and the global bucket keeps sends below it. (A
// platform whose 429 marks a global limit, as Discord's "global": true
// does, would add a pause of every chat.)
type Pacer struct {
	cfg PacerConfig

	mu     sync.Mutex
	global bucket
	chats  map[string]*bucket
}

// NewPacer returns a Pacer with the given limits.
func NewPacer(cfg PacerConfig) *Pacer {
	return &Pacer{cfg: cfg, global: newBucket(cfg.Global), chats: make(map[string]*bucket)}
}

// Wait blocks until a send to chat is allowed, then takes its place. It
// returns ctx.Err() if ctx ends first.
func (p *Pacer) Wait(ctx context.Context, chat string) error {
	for {
		d := p.reserve(chat, time.Now())
		if d <= 0 {
			return nil
		}
		if err := Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// Pause holds every send to chat for d (a server's retry-after).
func (p *Pacer) Pause(chat string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chat(chat).pause(time.Now().Add(d))
}

// reserve takes a place for chat and returns 0, or returns how long to wait
// before asking again.
func (p *Pacer) reserve(chat string, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.chat(chat)
	wait := max(b.wait(now), p.global.wait(now))
	if wait > 0 {
		return wait
	}
	b.take()
	p.global.take()
	return 0
}

// chat returns the chat's bucket, creating it; p.mu is held.
func (p *Pacer) chat(key string) *bucket {
	b, ok := p.chats[key]
	if ok {
		return b
	}
	if len(p.chats) >= maxIdleBuckets {
		p.forgetIdle(time.Now())
	}
	nb := newBucket(p.cfg.PerChat)
	p.chats[key] = &nb
	return &nb
}

func (p *Pacer) forgetIdle(now time.Time) {
	for k, b := range p.chats {
		if b.idle(now) {
			delete(p.chats, k)
		}
	}
}

// bucket is one token bucket with a pause.
type bucket struct {
	rate   Rate
	tokens float64
	last   time.Time
	until  time.Time // paused until
}

func newBucket(r Rate) bucket {
	if r.Burst < 1 {
		r.Burst = 1
	}
	return bucket{rate: r, tokens: float64(r.Burst)}
}

func (b *bucket) refill(now time.Time) {
	if b.rate.Every <= 0 {
		return
	}
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens += float64(now.Sub(b.last)) / float64(b.rate.Every)
		b.tokens = min(b.tokens, float64(b.rate.Burst))
	}
	b.last = now
}

// wait returns how long until a token is available and no pause holds.
func (b *bucket) wait(now time.Time) time.Duration {
	paused := b.until.Sub(now)
	if b.rate.Every <= 0 {
		return max(paused, 0)
	}
	b.refill(now)
	var empty time.Duration
	if b.tokens < 1 {
		empty = time.Duration((1 - b.tokens) * float64(b.rate.Every))
		empty = max(empty, time.Microsecond)
	}
	return max(paused, empty, 0)
}

func (b *bucket) take() {
	if b.rate.Every > 0 {
		b.tokens--
	}
}

func (b *bucket) pause(until time.Time) {
	if until.After(b.until) {
		b.until = until
	}
}

func (b *bucket) idle(now time.Time) bool {
	b.refill(now)
	return !b.until.After(now) && (b.rate.Every <= 0 || b.tokens >= float64(b.rate.Burst))
}
