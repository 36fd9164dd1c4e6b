package confkit

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehouse-bot/gatehouse/internal/secrets"
)

// Problem is one invalid configuration value: the full dotted key path and
// what is wrong with it. It never contains a secret value.
type Problem struct {
	Key string
	Msg string
}

// Checker records the first Problem found; its helpers are no-ops once one
// is recorded, so a section's checks read as a flat list. Key arguments are
// relative to the checker's prefix (see Under). The zero Checker is ready
// to use, with no prefix.
type Checker struct {
	prefix string
	rec    *record
}

type record struct{ first *Problem }

func (c *Checker) record() *record {
	if c.rec == nil {
		c.rec = &record{}
	}
	return c.rec
}

// Under returns a checker whose keys are relative to sub (a key relative to
// c, such as "gateways.<name>") and which records into c's first Problem.
func (c *Checker) Under(sub string) *Checker {
	return &Checker{prefix: c.Key(sub), rec: c.record()}
}

// Key returns key's full path.
func (c *Checker) Key(key string) string {
	switch {
	case c.prefix == "":
		return key
	case key == "":
		return c.prefix
	}
	return c.prefix + "." + key
}

// First returns the first Problem recorded, or nil.
func (c *Checker) First() *Problem { return c.record().first }

// Fail records a problem with key unless one is recorded already.
func (c *Checker) Fail(key, format string, args ...any) {
	if r := c.record(); r.first == nil {
		r.first = &Problem{Key: c.Key(key), Msg: fmt.Sprintf(format, args...)}
	}
}

// IntRange checks lo <= v <= hi.
func (c *Checker) IntRange(key string, v, lo, hi int) {
	if v < lo || v > hi {
		c.Fail(key, "%d out of range %d..%d", v, lo, hi)
	}
}

// OneOf checks that v is one of options.
func (c *Checker) OneOf(key, v string, options ...string) {
	if !slices.Contains(options, v) {
		c.Fail(key, "want %s, got %s", OrList(options), Quote(v))
	}
}

// Required checks that v is set, and reports whether it is.
func (c *Checker) Required(key, v string) bool {
	if v == "" {
		c.Fail(key, "required")
		return false
	}
	return true
}

// URL checks an absolute URL with one of schemes. It never repeats the URL:
// it may carry credentials.
func (c *Checker) URL(key, v string, schemes ...string) {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		c.Fail(key, "not a valid URL")
	case !slices.Contains(schemes, u.Scheme):
		c.Fail(key, "want a %s URL, got scheme %s", OrList(schemes), Quote(u.Scheme))
	case u.Host == "":
		c.Fail(key, "URL has no host")
	}
}

// Listen checks a host:port listen address.
func (c *Checker) Listen(key, v string) {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		c.Fail(key, "want host:port, got %s", Quote(v))
		return
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		c.Fail(key, "bad port %s", Quote(port))
	}
}

// IDs checks an allow list: non-empty entries without spaces.
func (c *Checker) IDs(key string, vs []string) {
	for i, v := range vs {
		if v == "" || HasSpace(v) {
			c.Fail(fmt.Sprintf("%s[%d]", key, i), "want an id without spaces, got %s", Quote(v))
		}
	}
}

// Credential is one key a gateway needs, and whether it is set.
type Credential struct {
	Key string
	Set bool
}

// Credentials enforces the enabling rule of a section whose keys c is
// under: "enabled: false" (explicit) turns the section off; "enabled: true"
// needs every credential; otherwise the credentials must be all set or all
// empty.
func (c *Checker) Credentials(explicit *bool, creds ...Credential) {
	if explicit != nil && !*explicit {
		return
	}
	var set string
	for _, cr := range creds {
		if cr.Set && set == "" {
			set = cr.Key
		}
	}
	for _, cr := range creds {
		switch {
		case cr.Set:
		case explicit != nil:
			c.Fail(cr.Key, "required when %s is true", c.Key("enabled"))
		case set != "":
			c.Fail(cr.Key, "required when %s is set", c.Key(set))
		}
	}
}

// Enabled is the enabling rule: credentials set and not explicitly
// disabled.
func Enabled(explicit *bool, credentials bool) bool {
	if explicit != nil && !*explicit {
		return false
	}
	return credentials
}

// HasSpace reports whether s contains white space.
func HasSpace(s string) bool { return strings.ContainsAny(s, " \t\r\n") }

// maxQuoted bounds how much of a bad value an error message repeats.
const maxQuoted = 40

// Quote returns a bad value for an error message: shortened, and masked
// when it looks like an API key.
func Quote(s string) string {
	if secrets.LooksLikeKey(s) {
		return strconv.Quote(secrets.Mask)
	}
	if r := []rune(s); len(r) > maxQuoted {
		s = string(r[:maxQuoted]) + "…"
	}
	return strconv.Quote(s)
}

// OrList formats options as `"a", "b" or "c"`.
func OrList(options []string) string {
	q := make([]string, len(options))
	for i, o := range options {
		q[i] = strconv.Quote(o)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
