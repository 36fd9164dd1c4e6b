package config

import (
	"net/url"
	"strings"
)

// Secrets lists every secret value in the configuration, for a
// secrets.Set: API keys, every gateway section's secret fields, a password
// inside the store DSN, and credentials inside a base_url or any gateway
// URL (https://user:password@proxy/v1); an MCP server's env and header
// values, and a header's credential after its scheme ("Bearer <token>").
func (c *Config) Secrets() []string {
	vals := make([]Secret, 0, len(c.LLM.Providers)+6)
	for _, p := range c.LLM.Providers {
		vals = append(vals, p.APIKey)
	}
	g := c.Gateways
	for _, s := range g.sections {
		vals = append(vals, s.Secrets()...)
	}
	for _, w := range c.Webhooks {
		vals = append(vals, w.Secret)
	}
	for _, m := range c.MCP.Servers {
		for _, v := range m.Env {
			vals = append(vals, v)
		}
		for k, v := range m.Headers {
			vals = append(vals, v)
			// Authorization: "Bearer <token>", "Basic <credentials>": the
			// credential alone is a secret too, should it be echoed
			// without its scheme.
			if !strings.EqualFold(k, "Authorization") && !strings.EqualFold(k, "Proxy-Authorization") {
				continue
			}
			if _, cred, ok := strings.Cut(strings.TrimSpace(v.Value()), " "); ok {
				vals = append(vals, Secret(strings.TrimSpace(cred)))
			}
		}
	}
	out := make([]string, 0, len(vals)+1)
	for _, v := range vals {
		if v != "" {
			out = append(out, v.Value())
		}
	}
	if pw := dsnPassword(c.Store.DSN.Value()); pw != "" {
		out = append(out, pw)
	}
	var urls []string
	for _, s := range g.sections {
		urls = append(urls, s.URLs()...)
	}
	for _, p := range c.LLM.Providers {
		urls = append(urls, p.BaseURL)
	}
	for _, m := range c.MCP.Servers {
		urls = append(urls, m.URL)
	}
	for _, u := range urls {
		if s := URLCredential(u); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// URLCredential returns the credential inside a URL's user info: the
// password of https://user:password@host, or the user of https://token@host
// (proxies take a token there). A URL without user info has none.
func URLCredential(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	if pw, ok := u.User.Password(); ok {
		return pw
	}
	return u.User.Username()
}

// RedactURL returns raw for display with its credential replaced by
// "xxxxx" (see URLCredential). A URL that does not parse is not shown.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "(unparsable URL)"
	case u.User == nil:
		return raw
	}
	if _, ok := u.User.Password(); !ok {
		u.User = url.User("xxxxx")
	}
	return u.Redacted()
}

// dsnPassword finds the password in a URL DSN (postgres://u:pw@h/db) or a
// key=value DSN (password=pw). A sqlite file path has none.
func dsnPassword(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			return pw
		}
	}
	for _, field := range strings.Fields(dsn) {
		if k, v, ok := strings.Cut(field, "="); ok && strings.EqualFold(k, "password") {
			return strings.Trim(v, `'`)
		}
	}
	return ""
}
