package discord

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Fault is an injected failure of one REST request.
type Fault int

// The faults FailNext can inject.
const (
	// FaultTooMany answers 429 with Discord's JSON body
	// {"message":"You are being rate limited.","retry_after":…,"global":false}
	// (Options.RetryAfter, in seconds) and the X-RateLimit-* headers of a
	// route bucket.
	FaultTooMany Fault = iota + 1
	// FaultTooManyGlobal is FaultTooMany for the global limit: "global":true
	// and X-RateLimit-Global; it pauses every route.
	FaultTooManyGlobal
	// FaultServer answers 500 Internal Server Error.
	FaultServer
	// FaultBadGateway answers 502 Bad Gateway (discordgo retries it itself
	// up to MaxRestRetries).
	FaultBadGateway
	// FaultUnavailable answers 503 Service Unavailable.
	FaultUnavailable
	// FaultMalformed answers 200 with a body that is not valid JSON.
	FaultMalformed
	// FaultHang holds the request until Release, Close or the client gives
	// up.
	FaultHang
	// FaultForbidden answers 403 with code 50013 Missing Permissions, as
	// when the bot lacks a permission in the channel.
	FaultForbidden
)

// FailNext makes the next n requests of route (RouteAny: of any route)
// fail with f. Route faults are used before RouteAny ones.
func (s *Server) FailNext(route string, n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[route] = append(s.faults[route], f)
	}
}

// injectFault answers the request with the next fault queued for route (or
// for any route) and reports whether it did.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request, route, bucket string) bool {
	s.mu.Lock()
	key := route
	if len(s.faults[key]) == 0 {
		key = RouteAny
	}
	queue := s.faults[key]
	if len(queue) == 0 {
		s.mu.Unlock()
		return false
	}
	f := queue[0]
	s.faults[key] = queue[1:]
	release, closed := s.release, s.closed
	s.mu.Unlock()

	switch f {
	case FaultTooMany, FaultTooManyGlobal:
		s.tooMany(w, bucket, f == FaultTooManyGlobal, s.opts.RetryAfter)
	case FaultServer:
		writeAPIError(w, &apiError{status: http.StatusInternalServerError, code: 0, message: "500: Internal Server Error"})
	case FaultBadGateway:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
	case FaultForbidden:
		writeAPIError(w, &apiError{status: http.StatusForbidden, code: 50013, message: "Missing Permissions"})
	case FaultUnavailable:
		writeAPIError(w, &apiError{status: http.StatusServiceUnavailable, code: 0, message: "503: Service Unavailable"})
	case FaultMalformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"12","channel_id":`))
	case FaultHang:
		select {
		case <-release:
			return false
		case <-closed:
		case <-r.Context().Done():
		}
		writeAPIError(w, &apiError{status: http.StatusBadGateway, code: 0, message: "502: Bad Gateway"})
	default:
		return false
	}
	return true
}

// tooMany answers 429 the way Discord does, asking the client to wait
// after, and starts the pause Early checks against.
func (s *Server) tooMany(w http.ResponseWriter, bucket string, global bool, after time.Duration) {
	secs := roundUpSeconds(after)
	reset := time.Now().Add(after)
	s.mu.Lock()
	if global {
		s.globalUntil = reset
	} else {
		s.penalty[bucket] = reset
	}
	s.mu.Unlock()
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(int(math.Ceil(secs))))
	h.Set("X-RateLimit-Scope", "user")
	h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(secs, 'f', 3, 64))
	if global {
		h.Set("X-RateLimit-Global", "true")
		h.Set("X-RateLimit-Scope", "global")
	} else {
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(reset.UnixMilli())/1000, 'f', 3, 64))
		h.Set("X-RateLimit-Bucket", fmt.Sprintf("%x", hash(bucket)))
		if h.Get("X-RateLimit-Limit") == "" {
			h.Set("X-RateLimit-Limit", "5")
		}
	}
	writeJSON(w, http.StatusTooManyRequests, map[string]any{
		"message": "You are being rate limited.", "retry_after": secs, "global": global,
	})
}

// roundUpSeconds is d in seconds, rounded up to the millisecond, so a
// client that waits exactly that long is never early.
func roundUpSeconds(d time.Duration) float64 {
	return float64((d+time.Millisecond-1)/time.Millisecond) / 1000
}

// hash is FNV-1a, enough for a stable bucket id.
func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := range len(s) {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}
