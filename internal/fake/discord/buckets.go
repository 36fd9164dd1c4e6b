package discord

import (
	"cmp"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimit emulates Discord's rate limits. Each route and major
// parameter (channel, guild, interaction or webhook token) is a bucket of
// Limit requests per Window; every answer carries the bucket's
// X-RateLimit-Limit, -Remaining, -Reset, -Reset-After and -Bucket headers,
// and a request over the limit gets a 429 whose retry_after is the time
// left in the window. Global caps all routes together at Global requests
// per GlobalWindow (default one second, as on Discord; over it: a global
// 429). Zero Limit or Global disables each.
type RateLimit struct {
	Limit        int
	Window       time.Duration
	Global       int
	GlobalWindow time.Duration
}

// bucket is one rate-limit bucket's current window.
type bucket struct {
	reset time.Time
	used  int
}

// bucketKey names a route's bucket: the route and its major parameters.
func bucketKey(route string, r *http.Request) string {
	var b strings.Builder
	b.WriteString(route)
	for _, p := range []string{"channel", "guild", "id", "token"} {
		if v := r.PathValue(p); v != "" {
			b.WriteString(" " + v)
		}
	}
	return b.String()
}

// limit applies Options.RateLimit to a request and reports whether it
// answered it with a 429.
func (s *Server) limit(w http.ResponseWriter, key string) bool {
	rl := s.opts.RateLimit
	if rl.Global > 0 {
		s.mu.Lock()
		now := time.Now()
		if !now.Before(s.globalWin.reset) {
			s.globalWin = bucket{reset: now.Add(cmp.Or(rl.GlobalWindow, time.Second))}
		}
		over := s.globalWin.used >= rl.Global
		if over {
			s.overLimit++
		} else {
			s.globalWin.used++
		}
		wait := s.globalWin.reset.Sub(now)
		s.mu.Unlock()
		if over {
			s.tooMany(w, key, true, wait)
			return true
		}
	}
	if rl.Limit <= 0 || rl.Window <= 0 {
		return false
	}
	s.mu.Lock()
	now := time.Now()
	b := s.buckets[key]
	if b == nil || !now.Before(b.reset) {
		b = &bucket{reset: now.Add(rl.Window)}
		s.buckets[key] = b
	}
	over := b.used >= rl.Limit
	if over {
		s.overLimit++
	} else {
		b.used++
	}
	left, reset := rl.Limit-b.used, b.reset
	s.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(rl.Limit))
	if over {
		s.tooMany(w, key, false, reset.Sub(now))
		return true
	}
	h.Set("X-RateLimit-Remaining", strconv.Itoa(left))
	h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(reset.UnixMilli())/1000, 'f', 3, 64))
	h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(roundUpSeconds(reset.Sub(now)), 'f', 3, 64))
	h.Set("X-RateLimit-Bucket", fmt.Sprintf("%x", hash(key)))
	return false
}

// OverLimit returns how many requests Options.RateLimit refused with a 429:
// a client that follows the X-RateLimit headers and paces itself under
// the global limit gets none.
func (s *Server) OverLimit() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overLimit
}
