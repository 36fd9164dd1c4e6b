package webconsole

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// LinkTTL is how long a sign-in link is valid.
const LinkTTL = 10 * time.Minute

// newLink stores a sign-in link for id and returns its URL.
func (c *Console) newLink(ctx context.Context, id core.Identity) (string, error) {
	token, now := newSecret(), c.o.Now()
	if err := c.o.Store.AddWebLink(ctx, record.WebLink{Hash: hash(token), Identity: id, Created: now, Expires: now.Add(LinkTTL)}); err != nil {
		return "", fmt.Errorf("webconsole: store sign-in link: %w", err)
	}
	return c.origin + Pattern + "signin?t=" + token, nil
}

// signinPage shows the link's "Sign in" button; a GET changes nothing, so
// a chat app fetching a preview of the link does not use it up.
func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("t")
	if len(token) != 64 {
		plain(w, http.StatusNotFound, "This sign-in link is not valid. Send /web to the bot in chat for a new one.")
		return
	}
	var d doc
	d.top("Sign in", session{})
	d.tag(`<p>This link signs you in to gatehouse's web console, once. Press the button to sign in on this browser.</p><form method="post" action="/web/signin">`)
	d.hidden("t", token)
	d.tag(`<button class="ok">Sign in</button></form>`)
	d.send(w, http.StatusOK)
}

// signin uses the link up, starts a session, sets its cookie and goes to
// the pending approvals.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	if why := c.crossOrigin(r); why != "" {
		c.o.Log.Warn().Str("why", why).Msg("webconsole: cross-origin sign-in refused")
		plain(w, http.StatusForbidden, "Refused: this request came from another site.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		plain(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	token := r.PostForm.Get("t")
	if len(token) != 64 {
		plain(w, http.StatusNotFound, "This sign-in link is not valid. Send /web to the bot in chat for a new one.")
		return
	}
	l, err := c.o.Store.UseWebLink(r.Context(), hash(token))
	if errors.Is(err, record.ErrNotFound) {
		plain(w, http.StatusForbidden, "This sign-in link was used already, or it expired. Send /web to the bot in chat for a new one.")
		return
	}
	if err != nil {
		c.o.Log.Error().Err(err).Msg("webconsole: use sign-in link")
		plain(w, http.StatusInternalServerError, "Could not sign you in (storage error). Try again.")
		return
	}
	if !c.o.Approvals.MaySignIn(l.Identity) {
		plain(w, http.StatusForbidden, "You are no longer an approver.")
		return
	}
	id, now := newSecret(), c.o.Now()
	s := record.WebSession{Hash: hash(id), Identity: l.Identity, Created: now, Expires: now.Add(c.o.Session)}
	if err := c.o.Store.AddWebSession(r.Context(), s); err != nil {
		c.o.Log.Error().Err(err).Msg("webconsole: add session")
		plain(w, http.StatusInternalServerError, "Could not sign you in (storage error). Send /web for a new link.")
		return
	}
	c.record(r.Context(), l.Identity, "signed-in", "web console session until "+s.Expires.UTC().Format(time.RFC3339))
	c.setCookie(w, id, expiresIn(now, s.Expires))
	http.Redirect(w, r, Pattern, http.StatusSeeOther)
}

// signout ends this browser's session.
func (c *Console) signout(w http.ResponseWriter, r *http.Request) {
	s, ok := c.changing(w, r)
	if !ok {
		return
	}
	if err := c.o.Store.EndWebSession(r.Context(), hash(s.id)); err != nil {
		c.o.Log.Error().Err(err).Msg("webconsole: end session")
		plain(w, http.StatusInternalServerError, "Could not sign you out (storage error). Try again, or send /web signout in chat.")
		return
	}
	c.record(r.Context(), s.identity, "signed-out", "this browser")
	c.setCookie(w, "", -1)
	notice(w, "Signed out", session{}, "You are signed out. Send /web to the bot in chat to sign in again.")
}

// record appends a sign-in or sign-out of id to the audit log.
func (c *Console) record(ctx context.Context, id core.Identity, outcome, detail string) {
	e := record.AuditEntry{At: c.o.Now(), Conv: Gateway + ":" + string(id), Tool: "web", RequestedBy: id, Outcome: outcome, Detail: detail}
	if err := c.o.Audit.AppendAudit(ctx, e); err != nil {
		c.o.Log.Error().Err(err).Str("outcome", outcome).Msg("webconsole: audit append")
	}
}
