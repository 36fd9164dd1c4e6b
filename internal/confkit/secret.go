// Package confkit holds what a configuration section is made of, for
// config and for the gateway packages that each own their section:
// the Secret type, a Checker that records the first invalid key, and the
// Section contract a gateway's section meets. It is a leaf: gateway packages
// import it instead of config, so that config, which is
// handed the gateway table, never sits on an import cycle with them.
package confkit

import (
	"encoding/json"
	"fmt"
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
