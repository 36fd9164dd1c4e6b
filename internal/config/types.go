package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Secret is a value (token, API key, password) that never prints itself:
// every string, text, JSON and YAML form is "<secret>", or "" when empty.
// Value returns the real thing.
type Secret string

const secretMask = "<secret>"

// Value returns the secret itself, for handing to a client library.
func (s Secret) Value() string { return string(s) }

// String returns "<secret>", or "" when the secret is empty.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return secretMask
}

// GoString hides the secret from %#v.
func (s Secret) GoString() string { return fmt.Sprintf("config.Secret(%q)", s.String()) }

// MarshalText hides the secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalJSON hides the secret.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// MarshalYAML hides the secret.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

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
