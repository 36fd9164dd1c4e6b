package webconsole

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"path"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

var errBadURL = errors.New("want scheme://host[:port], http or https")

// Bounds of what a browser may send.
const (
	maxQuery = 1024    // bytes of a query string
	maxForm  = 8 << 10 // bytes of a POST body
)

// csp allows nothing but the console's own stylesheet and forms posted to
// itself: no script at all, no frame, nothing from another origin.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP serves the console: every response carries the security
// headers; a query string over maxQuery is refused before anything reads it.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // not no-referrer: Chromium then sends a form's Origin as null
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if len(r.URL.RawQuery) > maxQuery {
		plain(w, http.StatusRequestURITooLong, "The query string is too long.")
		return
	}
	if p := r.URL.Path; p != Pattern && path.Clean(p) != p {
		plain(w, http.StatusNotFound, "There is no such page.")
		return
	}
	c.mux.ServeHTTP(w, r)
}

// plain answers with a plain page: a status and one sentence, nothing
// from the request.
func plain(w http.ResponseWriter, status int, msg string) {
	http.Error(w, msg, status)
}

// crossOrigin says why r, a request that would change something, could
// have been sent by another site's page, or "" when it could not: a
// browser sends Sec-Fetch-Site with every request (same-origin, or none
// when a person typed or opened the address), and Origin with a POST.
// Another port of the same host is another origin.
func (c *Console) crossOrigin(r *http.Request) string {
	site := r.Header.Values("Sec-Fetch-Site")
	if len(site) != 1 || (site[0] != "same-origin" && site[0] != "none") {
		return "Sec-Fetch-Site is not same-origin"
	}
	for _, o := range r.Header.Values("Origin") {
		if o != c.origin {
			return "the Origin is another site's"
		}
	}
	return ""
}

// session is a signed-in browser.
type session struct {
	id       string // the cookie's value
	identity core.Identity
	csrf     string
}

// cookieName is the session cookie's name: __Host- (only this host, path
// /, Secure) where the console is served over https.
func (c *Console) cookieName() string {
	if c.secure {
		return "__Host-gatehouse"
	}
	return "gatehouse"
}

// setCookie gives the browser the session id.
func (c *Console) setCookie(w http.ResponseWriter, id string, maxAge int) {
	path := Pattern
	if c.secure {
		path = "/"
	}
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(), Value: id, Path: path, MaxAge: maxAge,
		HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteStrictMode})
}

// session returns the live session r's cookie names, or ok false.
func (c *Console) session(r *http.Request) (session, bool) {
	ck, err := r.Cookie(c.cookieName())
	if err != nil || len(ck.Value) != 64 {
		return session{}, false
	}
	s, err := c.o.Store.WebSession(r.Context(), hash(ck.Value))
	if err != nil {
		if !errors.Is(err, record.ErrNotFound) {
			c.o.Log.Error().Err(err).Msg("webconsole: read session")
		}
		return session{}, false
	}
	return session{id: ck.Value, identity: s.Identity, csrf: csrfToken(ck.Value)}, true
}

// signedIn returns r's session, or answers 401 and returns false.
func (c *Console) signedIn(w http.ResponseWriter, r *http.Request) (session, bool) {
	s, ok := c.session(r)
	if !ok && r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Site") == "cross-site" && len(r.Cookies()) == 0 {
		// A link from a chat app is a navigation from another site, which
		// a SameSite=Strict cookie does not come with: the page loads
		// itself again from here, and the cookie comes.
		var d doc
		d.tag(`<!doctype html><html lang="en"><head><meta http-equiv="refresh" content="0"><title>gatehouse</title></head><body><p>Opening…`)
		d.send(w, http.StatusOK)
		return s, false
	}
	if !ok {
		plain(w, http.StatusUnauthorized, "You are not signed in, or your session ended. Send /web to the bot in chat for a sign-in link.")
	}
	return s, ok
}

// changing checks a request that changes something: same origin, a
// session, and that session's CSRF token in the form (bounded). It
// answers the refusal itself and returns false.
func (c *Console) changing(w http.ResponseWriter, r *http.Request) (session, bool) {
	if why := c.crossOrigin(r); why != "" {
		c.o.Log.Warn().Str("why", why).Str("path", r.URL.Path).Msg("webconsole: cross-origin request refused")
		plain(w, http.StatusForbidden, "Refused: this request came from another site.")
		return session{}, false
	}
	s, ok := c.signedIn(w, r)
	if !ok {
		return session{}, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		plain(w, http.StatusBadRequest, "The form could not be read.")
		return session{}, false
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		c.o.Log.Warn().Str("identity", string(s.identity)).Msg("webconsole: CSRF token refused")
		plain(w, http.StatusForbidden, "Refused: the form's token is not this session's. Reload the page and try again.")
		return session{}, false
	}
	return s, true
}

// newSecret is 32 random bytes in hex: a link token or a session id.
func newSecret() string {
	b := make([]byte, 32)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// hash is what the store keeps of a secret.
func hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// csrfToken is the CSRF token of the session id: only who knows the id
// (the HttpOnly cookie's browser) can make it, and another session's
// token, even the same person's, differs.
func csrfToken(id string) string {
	h := sha256.Sum256([]byte("gatehouse web csrf\x00" + id))
	return hex.EncodeToString(h[:])
}

// expiresIn is the seconds until t, at least 1, for a cookie's Max-Age.
func expiresIn(now, t time.Time) int {
	return max(1, int(t.Sub(now)/time.Second))
}
