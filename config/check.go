package config

import (
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/confkit"
)

// checker records the first validation error; its helpers are no-ops once
// one is recorded, so a section's checks read as a flat list. It is a
// confkit.Checker, shared with the gateway sections, plus the checks that
// need the gateway table's names.
type checker struct {
	kit confkit.Checker
	// gateways are the names identities and conversation keys may start with.
	gateways []string
}

func (c *checker) fail(key, format string, args ...any) { c.kit.Fail(key, format, args...) }

func (c *checker) intRange(key string, v, lo, hi int) { c.kit.IntRange(key, v, lo, hi) }

func (c *checker) positive(key string, d Duration) {
	if d <= 0 {
		c.fail(key, "must be positive, got %s", d)
	}
}

func (c *checker) oneOf(key, v string, options ...string) { c.kit.OneOf(key, v, options...) }

func (c *checker) required(key, v string) bool { return c.kit.Required(key, v) }

// url checks an absolute URL with one of schemes. It never repeats the URL:
// it may carry credentials.
func (c *checker) url(key, v string, schemes ...string) { c.kit.URL(key, v, schemes...) }

// listen checks a host:port listen address.
func (c *checker) listen(key, v string) { c.kit.Listen(key, v) }

// err returns the first error recorded, or nil.
func (c *checker) err() *Error {
	p := c.kit.First()
	if p == nil {
		return nil
	}
	return &Error{Key: p.Key, Msg: p.Msg}
}

// gateway checks the gateway part of an identity or conversation key.
func (c *checker) gateway(key, v, g string) bool {
	if !slices.Contains(c.gateways, g) {
		c.fail(key, "unknown gateway %s in %s (want %s)", quote(g), quote(v), orList(c.gateways))
		return false
	}
	return true
}

// identity checks "gateway:id".
func (c *checker) identity(key, v string) {
	g, id, ok := strings.Cut(v, ":")
	if !ok || id == "" || hasSpace(v) {
		c.fail(key, "want an identity gateway:id (gateway %s), got %s", orList(c.gateways), quote(v))
		return
	}
	c.gateway(key, v, g)
}

// conversation checks "gateway:chat[:thread]".
func (c *checker) conversation(key, v string) {
	conv, err := core.ParseConversation(v)
	if err != nil || hasSpace(v) {
		c.fail(key, "want a conversation gateway:chat[:thread] (gateway %s), got %s", orList(c.gateways), quote(v))
		return
	}
	c.gateway(key, v, conv.Gateway)
}

func hasSpace(s string) bool { return confkit.HasSpace(s) }

// orList formats options as `"a", "b" or "c"`.
func orList(options []string) string { return confkit.OrList(options) }
