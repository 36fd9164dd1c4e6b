package config

import (
	"net"
	"net/url"
	"time"
)

// maxConsoleSession bounds http.console_session: a stolen session cookie
// must not outlive a month.
const maxConsoleSession = 30 * 24 * time.Hour

// checkWeb checks the web console's keys: public_url an http(s)
// origin (no path, query or user), a session between a minute and
// maxConsoleSession, and, with the console on, an http.listen to serve it
// on and an address people's browsers can reach.
func (h *HTTP) checkWeb(ch *checker) {
	if h.PublicURL != "" {
		ch.url("http.public_url", h.PublicURL, "http", "https")
		if u, err := url.Parse(h.PublicURL); err == nil && ((u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil) {
			ch.fail("http.public_url", "want only scheme://host[:port] (the web console is served at /web/ of it), got %q", h.PublicURL)
		}
	}
	if d := h.ConsoleSession.D(); d < time.Minute || d > maxConsoleSession {
		ch.fail("http.console_session", "want between 1m and %s, got %s", maxConsoleSession, h.ConsoleSession)
	}
	if !h.Console {
		return
	}
	if h.Listen == "" {
		ch.fail("http.console", "the console is served on http.listen, which is empty")
		return
	}
	if host, _, err := net.SplitHostPort(h.Listen); err == nil && h.PublicURL == "" {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			ch.fail("http.public_url", "required with http.console when http.listen (%s) binds every address: the sign-in links need the address people's browsers reach", h.Listen)
		}
	}
}
