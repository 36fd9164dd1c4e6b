package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
)

// checker records the first validation error; its helpers are no-ops once
// one is recorded, so a section's checks read as a flat list.
type checker struct {
	err *Error
}

func (c *checker) fail(key, format string, args ...any) {
	if c.err == nil {
		c.err = &Error{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
}

func (c *checker) intRange(key string, v, lo, hi int) {
	if v < lo || v > hi {
		c.fail(key, "%d out of range %d..%d", v, lo, hi)
	}
}

func (c *checker) positive(key string, d Duration) {
	if d <= 0 {
		c.fail(key, "must be positive, got %s", d)
	}
}

func (c *checker) oneOf(key, v string, options ...string) {
	if !slices.Contains(options, v) {
		c.fail(key, "want %s, got %s", orList(options), quote(v))
	}
}

func (c *checker) required(key, v string) bool {
	if v == "" {
		c.fail(key, "required")
		return false
	}
	return true
}

// url checks an absolute URL with one of schemes. It never repeats the URL:
// it may carry credentials.
func (c *checker) url(key, v string, schemes ...string) {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		c.fail(key, "not a valid URL")
	case !slices.Contains(schemes, u.Scheme):
		c.fail(key, "want a %s URL, got scheme %s", orList(schemes), quote(u.Scheme))
	case u.Host == "":
		c.fail(key, "URL has no host")
	}
}

// listen checks a host:port listen address.
func (c *checker) listen(key, v string) {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		c.fail(key, "want host:port, got %s", quote(v))
		return
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		c.fail(key, "bad port %s", quote(port))
	}
}

// gateway checks the gateway part of an identity or conversation key.
func (c *checker) gateway(key, v, g string) bool {
	if !slices.Contains(knownGateways, g) {
		c.fail(key, "unknown gateway %s in %s (want %s)", quote(g), quote(v), orList(knownGateways))
		return false
	}
	return true
}

// identity checks "gateway:id".
func (c *checker) identity(key, v string) {
	g, id, ok := strings.Cut(v, ":")
	if !ok || id == "" || hasSpace(v) {
		c.fail(key, "want an identity gateway:id (e.g. telegram:123456789), got %s", quote(v))
		return
	}
	c.gateway(key, v, g)
}

// conversation checks "gateway:chat[:thread]".
func (c *checker) conversation(key, v string) {
	conv, err := core.ParseConversation(v)
	if err != nil || hasSpace(v) {
		c.fail(key, "want a conversation gateway:chat[:thread] (e.g. telegram:-1001234), got %s", quote(v))
		return
	}
	c.gateway(key, v, conv.Gateway)
}

// ids checks an allow list: non-empty entries without spaces.
func (c *checker) ids(key string, vs []string) {
	for i, v := range vs {
		if v == "" || hasSpace(v) {
			c.fail(fmt.Sprintf("%s[%d]", key, i), "want an id without spaces, got %s", quote(v))
		}
	}
}

func hasSpace(s string) bool { return strings.ContainsAny(s, " \t\r\n") }

// orList formats options as `"a", "b" or "c"`.
func orList(options []string) string {
	q := make([]string, len(options))
	for i, o := range options {
		q[i] = strconv.Quote(o)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
