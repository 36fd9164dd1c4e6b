package gateways

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff computes waits between retries: exponential from Min, capped at
// Max, with jitter so that many clients retrying at once spread out.
type Backoff struct {
	Min time.Duration // the first wait's ceiling; 100ms when zero
	Max time.Duration // the cap; Min when smaller than Min
}

// Next returns the wait before retry number attempt (0 for the first retry):
// a random duration between half and all of min(Max, Min·2^attempt).
func (b Backoff) Next(attempt int) time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = 100 * time.Millisecond
	}
	if hi < lo {
		hi = lo
	}
	d := hi
	if attempt < 0 {
		attempt = 0
	}
	if attempt < 62 && lo<<attempt > 0 && lo<<attempt < hi {
		d = lo << attempt
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// Sleep waits for d or until ctx ends, whichever is first. It returns
// ctx.Err() when ctx ended, else nil.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
