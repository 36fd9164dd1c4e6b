package webhooks

import (
	"sync"
	"time"
)

// limiter is a token bucket of Rate.N tokens refilled at N per Per: a
// burst of N, then N per Per on average.
type limiter struct {
	mu     sync.Mutex
	rate   Rate
	tokens float64
	filled time.Time
}

func newLimiter(r Rate, now time.Time) *limiter {
	return &limiter{rate: r, tokens: float64(r.N), filled: now}
}

// take takes a token at now, or reports how long until one is there.
func (l *limiter) take(now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	per := l.rate.Per / time.Duration(l.rate.N) // the time one token takes
	if el := now.Sub(l.filled); el > 0 {
		l.tokens = min(float64(l.rate.N), l.tokens+float64(el)/float64(per))
	}
	l.filled = now
	if l.tokens >= 1 {
		l.tokens--
		return true, 0
	}
	return false, time.Duration((1 - l.tokens) * float64(per))
}
