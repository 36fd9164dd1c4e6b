package webconsole

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Pages are written by a small writer rather than html/template: a
// template's execution looks methods up by name through reflect, which
// keeps every exported method of the binary (4.6 MB more, far past the
// release's size limit, 17.5 MB). The writer keeps html/template's one
// promise that matters here by type: markup is a type of its own, which only constants
// of this package become without a conversion (none is written outside
// them: TestNoMarkupConversion), and every string is escaped, whether it
// lands in text or in a quoted attribute value.

// markup is trusted HTML: a constant of this package.
type markup string

// doc is a page being written.
type doc struct{ b strings.Builder }

// tag writes trusted markup.
//
//go:noinline // one call at each of the many call sites, not three: the release binary is near its size limit
func (d *doc) tag(m markup) { d.b.WriteString(string(m)) }

// text writes s escaped: in text, or inside a quoted attribute value.
//
//go:noinline // one call at each of the many call sites, not three: the release binary is near its size limit
func (d *doc) text(s string) { d.b.WriteString(html.EscapeString(s)) }

// el writes <open>s</close> with s escaped.
//
//go:noinline // one call at each of the many call sites, not three: the release binary is near its size limit
func (d *doc) el(open, close markup, s string) { d.tag(open); d.text(s); d.tag(close) }

// row writes one <dt>/<dd> pair.
//
//go:noinline // one call at each of the many call sites, not three: the release binary is near its size limit
func (d *doc) row(k markup, v string) { d.el("<dt>"+k+"</dt><dd>", "</dd>", v) }

// link writes <a href="path">s</a>, path escaped.
func (d *doc) link(path, s string) { d.tag(`<a href="`); d.text(path); d.el(`">`, "</a>", s) }

// hidden writes a hidden form field.
func (d *doc) hidden(name markup, v string) {
	d.tag(`<input type="hidden" name="` + name + `" value="`)
	d.text(v)
	d.tag(`">`)
}

// top writes the page's head, the navigation of a signed-in person and
// the title.
func (d *doc) top(title string, s session) {
	d.tag(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>`)
	d.text(title)
	d.tag(` · gatehouse</title><link rel="stylesheet" href="/web/style.css"></head><body>`)
	if s.identity != "" {
		d.tag(`<nav><a href="/web/">Pending</a><a href="/web/audit">Audit</a><a href="/web/conversations">Conversations</a><a href="/web/cluster">Cluster</a><form method="post" action="/web/signout">`)
		d.hidden("csrf", s.csrf)
		d.el("<span>", "</span> <button>Sign out</button></form></nav>", string(s.identity))
	}
	d.el("<h1>", "</h1>", title)
}

// send answers with the page.
func (d *doc) send(w http.ResponseWriter, status int) {
	d.tag("</body></html>")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(d.b.String())) //nolint:errcheck // the browser sees a cut page
}

// notice answers with a page of one sentence.
func notice(w http.ResponseWriter, title string, s session, msg string) {
	var d doc
	d.top(title, s)
	d.el("<p>", "</p>", msg)
	if s.identity != "" {
		d.tag(`<p><a href="/web/">Back to the pending approvals</a></p>`)
	}
	d.send(w, http.StatusOK)
}

// human writes a duration the way a person reads it: 45s, 12m, 3h5m, 2d4h.
func human(d time.Duration) string {
	switch d = d.Round(time.Second); {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// when writes a time in UTC.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }

// PagePath is the console's path of a request's page.
func PagePath(token string) string { return Pattern + "r/" + url.PathEscape(token) }

// routes are the console's pages; anything else is a plain 404.
func (c *Console) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /web/{$}", c.pending)
	mux.HandleFunc("GET /web/r/{token}", c.one)
	mux.HandleFunc("POST /web/r/{token}", c.decide)
	mux.HandleFunc("GET /web/signin", c.signinPage)
	mux.HandleFunc("POST /web/signin", c.signin)
	mux.HandleFunc("POST /web/signout", c.signout)
	mux.HandleFunc("GET /web/style.css", c.style)
	mux.HandleFunc("GET /web/audit", c.audit)
	mux.HandleFunc("GET /web/audit.json", c.audit)
	c.viewRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		plain(w, http.StatusNotFound, "There is no such page.")
	})
	return mux
}

// style serves the one stylesheet.
func (c *Console) style(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Write(styleCSS) //nolint:errcheck // the browser sees a cut file
}
