package slack

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// bucket is one channel's allowance of chat.postMessage calls.
type bucket struct {
	tokens float64
	last   time.Time
}

// RateLimited returns how many 429s the fake answered, injected faults and
// channel pacing (Options.ChannelRate) together.
func (s *Server) RateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited
}

// pace takes one post from channel's bucket, or answers 429 with the
// seconds until the bucket has one again and reports false.
func (s *Server) pace(w http.ResponseWriter, channel string) bool {
	if s.opts.ChannelRate <= 0 || channel == "" {
		return true
	}
	now := time.Now()
	s.mu.Lock()
	b, ok := s.buckets[channel]
	if !ok {
		b = &bucket{tokens: float64(s.opts.ChannelBurst), last: now}
		s.buckets[channel] = b
	}
	b.tokens = min(float64(s.opts.ChannelBurst), b.tokens+float64(now.Sub(b.last))/float64(s.opts.ChannelRate))
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		s.mu.Unlock()
		return true
	}
	wait := time.Duration((1 - b.tokens) * float64(s.opts.ChannelRate))
	secs := max(1, int(math.Ceil(wait.Seconds())))
	s.penalty[channel] = now.Add(time.Duration(secs) * time.Second)
	s.limited++
	s.mu.Unlock()
	writeTooMany(w, secs)
	return false
}

// writeTooMany answers 429 with a Retry-After header, as Slack does.
func writeTooMany(w http.ResponseWriter, seconds int) {
	w.Header().Set("Retry-After", strconv.Itoa(seconds))
	writeStatus(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"})
}
