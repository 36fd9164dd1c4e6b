package auditfmt

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

const day = 24 * time.Hour

// ParseSince parses a --since value: a Go duration ("24h", "90m", "1h30m")
// or a number of days, alone or followed by a duration ("7d", "1d12h").
// It must be positive.
func ParseSince(s string) (time.Duration, error) {
	d, err := parseSince(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("since %q: want a positive duration like 24h, 90m or 7d", s)
	}
	return d, nil
}

func parseSince(s string) (time.Duration, error) {
	days, rest, ok := strings.Cut(s, "d")
	if !ok {
		return time.ParseDuration(s)
	}
	n, err := strconv.ParseUint(days, 10, 32)
	if err != nil || n > uint64(time.Duration(1<<63-1)/day) {
		return 0, fmt.Errorf("bad days %q", days)
	}
	d := time.Duration(n) * day
	if rest == "" {
		return d, nil
	}
	r, err := time.ParseDuration(rest)
	if err != nil || r < 0 || d > time.Duration(1<<63-1)-r {
		return 0, fmt.Errorf("bad duration %q", rest)
	}
	return d + r, nil
}
