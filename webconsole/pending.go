package webconsole

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Bounds of the pending page.
const (
	maxPending = 100       // requests shown
	maxShown   = 256 << 10 // bytes of one call's arguments or diff
	maxReason  = 500       // runes of a deny reason
)

// request is one pending approval as a page shows it.
type request struct {
	record.Approval
	Profile string
	Args    string // the arguments, indented, hidden runes escaped
	Change  *Change
	Own     bool // the signed-in person's own request: deny only
	Waiting time.Duration
	Left    time.Duration
}

// pending lists what the signed-in person may resolve, newest first.
func (c *Console) pending(w http.ResponseWriter, r *http.Request) {
	s, ok := c.signedIn(w, r)
	if !ok {
		return
	}
	list, err := c.requests(r, s, "")
	if err != nil {
		plain(w, http.StatusInternalServerError, "Could not read the pending approvals (storage error).")
		return
	}
	pendingPage(w, "Pending approvals", s, list)
}

// one shows one request (the link in a chat request).
func (c *Console) one(w http.ResponseWriter, r *http.Request) {
	s, ok := c.signedIn(w, r)
	if !ok {
		return
	}
	list, err := c.requests(r, s, r.PathValue("token"))
	if err != nil {
		plain(w, http.StatusInternalServerError, "Could not read the pending approvals (storage error).")
		return
	}
	if len(list) == 0 {
		plain(w, http.StatusNotFound, "There is no pending request of that name that you may answer. It may have been answered already.")
		return
	}
	pendingPage(w, "Request "+list[0].Token, s, list)
}

// requests returns the live pending approvals s may resolve (only token,
// when set), newest first, at most maxPending.
func (c *Console) requests(r *http.Request, s session, token string) ([]request, error) {
	all, err := c.o.Approvals.Pending(r.Context())
	if err != nil {
		c.o.Log.Error().Err(err).Msg("webconsole: pending approvals")
		return nil, err
	}
	now := c.o.Now()
	// sort.Slice: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.Slice(all, func(i, j int) bool { return all[j].Created.Before(all[i].Created) })
	var out []request
	for _, a := range all {
		if len(out) == maxPending {
			break
		}
		if (token != "" && a.Token != token) || !now.Before(a.Expires) || !c.o.Approvals.MayResolve(s.identity, a) {
			continue
		}
		q := request{Approval: a, Profile: c.o.Approvals.Profile(a.Conv), Args: showArgs(a.Call.Args),
			Own: c.o.Approvals.OwnRequest(s.identity, a), Waiting: now.Sub(a.Created), Left: a.Expires.Sub(now)}
		if ch, ok := c.o.Approvals.Change(a); ok {
			ch.Text = textutil.Shorten(ch.Text, maxShown)
			q.Change = &ch
		}
		out = append(out, q)
	}
	return out, nil
}

// showArgs indents a call's JSON arguments and escapes what would hide.
func showArgs(args string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(args), "", "  ") == nil {
		args = b.String()
	}
	return textutil.Shorten(textutil.GraphicJSON(args), maxShown)
}

// decisions maps a form's button to the broker's decision.
var decisions = map[string]core.ApprovalDecision{
	"approve": core.DecisionApprove, "always": core.DecisionApproveAlways,
	"grant": core.DecisionApproveGrant, "deny": core.DecisionDeny,
}

// decide approves or denies one request through the broker.
func (c *Console) decide(w http.ResponseWriter, r *http.Request) {
	s, ok := c.changing(w, r)
	if !ok {
		return
	}
	d, ok := decisions[r.PostForm.Get("decision")]
	if !ok {
		plain(w, http.StatusBadRequest, "Unknown decision.")
		return
	}
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	if utf8.RuneCountInString(reason) > maxReason {
		plain(w, http.StatusBadRequest, "The reason is too long.")
		return
	}
	token := r.PathValue("token")
	outcome := c.o.Approvals.Decide(r.Context(), s.identity, token, d, reason)
	c.o.Log.Info().Str("identity", string(s.identity)).Str("decision", r.PostForm.Get("decision")).Str("outcome", outcome).Msg("webconsole: decision")
	notice(w, "Request "+token, s, "Request "+token+": "+outcome+".")
}
