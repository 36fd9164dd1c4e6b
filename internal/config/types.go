package config

import (
	"fmt"
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
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("bad duration %s", quote(s))
	}
	return Duration(d), nil
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
