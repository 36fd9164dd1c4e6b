package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// Secret is a value (token, API key, password) that never prints itself:
// every string, text, JSON and YAML form is "<secret>", or "" when empty.
// It is confkit.Secret, which gateway packages use for their own sections.
type Secret = confkit.Secret

const secretMask = "<secret>"

// Duration is a time.Duration written as "15m", "60s", "2160h".
type Duration time.Duration

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats the duration without zero trailing units: "15m", not "15m0s".
func (d Duration) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// ParseDuration parses a Go duration ("90s", "1h30m"); "0" is zero.
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	d, err := time.ParseDuration(t)
	if err != nil {
		if bareNumber(t) {
			// Seconds? Minutes? Say that it needs a unit, with the number.
			return 0, fmt.Errorf("bad duration %s: a duration needs a unit, e.g. %sm or %ss (units: ms, s, m, h)", quote(s), t, t)
		}
		return 0, fmt.Errorf("bad duration %s", quote(s))
	}
	return Duration(d), nil
}

// bareNumber reports whether s is a short number without a unit: "15",
// "1.5".
func bareNumber(s string) bool {
	if s == "" || len(s) > 12 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// MarshalText formats the duration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalYAML formats the duration.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML parses a duration scalar.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want a duration, got %s", kindName(n))
	}
	return d.UnmarshalText([]byte(n.Value))
}

// Size is a byte count written as a number of bytes or with a binary unit:
// "16MiB", "512 MiB", "64KiB", "2GiB" (KB, MB, GB are read as the binary
// units too).
type Size int64

// ParseSize parses a size; "0" is zero.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToUpper(strings.TrimSpace(t[len(num):]))
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %s (want e.g. 16MiB)", quote(s))
	}
	shift := map[string]uint{"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20, "MIB": 20, "G": 30, "GB": 30, "GIB": 30}
	sh, ok := shift[unit]
	if !ok || n > math.MaxInt64>>sh {
		return 0, fmt.Errorf("bad size %s (want e.g. 16MiB)", quote(s))
	}
	return Size(n << sh), nil
}

// String formats the size in the largest binary unit that divides it.
func (s Size) String() string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if s > 0 && s%(1<<u.shift) == 0 {
			return strconv.FormatInt(int64(s>>u.shift), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// MarshalYAML formats the size.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }
