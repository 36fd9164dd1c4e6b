package llm

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// duration is n units: 0 for a value that is not positive (NaN included),
// the longest Duration for one past it (1e300 seconds, Inf), where a plain
// conversion would overflow to a negative wait.
func duration(n float64, unit time.Duration) time.Duration {
	switch d := n * float64(unit); {
	case !(d > 0):
		return 0
	case d >= math.MaxInt64:
		return math.MaxInt64
	default:
		return time.Duration(d)
	}
}

// retryAfter reads retry-after-ms (sent by OpenAI) or Retry-After, in
// seconds or as an HTTP date. It returns zero when there is none.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return duration(ms, time.Millisecond)
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return duration(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
