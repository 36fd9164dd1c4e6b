package webconsole

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Bounds of the audit pages.
const (
	auditPage = 50   // entries a page
	auditScan = 5000 // newest matching entries searched at most
	maxField  = 200  // bytes of one search field
)

// auditQuery is the audit search of a request.
type auditQuery struct {
	filter                 record.AuditFilter
	until                  time.Time
	person, instance, date string
	page                   int
}

// parseAudit reads the search fields; since and until are dates or
// datetime-local values, in UTC.
func parseAudit(q url.Values) (auditQuery, bool) {
	for _, vs := range q {
		for _, v := range vs {
			if len(v) > maxField {
				return auditQuery{}, false
			}
		}
	}
	a := auditQuery{filter: record.AuditFilter{Conv: q.Get("conv"), Tool: q.Get("tool"), Outcome: q.Get("outcome"),
		Token: q.Get("token"), Limit: auditScan}, person: q.Get("person"), instance: q.Get("instance")}
	var ok bool
	if a.filter.Since, ok = parseWhen(q.Get("since")); !ok {
		return a, false
	}
	if a.until, ok = parseWhen(q.Get("until")); !ok {
		return a, false
	}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > auditScan/auditPage {
			return a, false
		}
		a.page = n
	}
	return a, true
}

// parseWhen reads "", a date or a datetime-local value, in UTC.
func parseWhen(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, true
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// search returns the entries of q that id may see, newest first, and
// whether more pages follow.
func (c *Console) search(r *http.Request, id core.Identity, q auditQuery) ([]record.AuditEntry, bool, error) {
	all, err := c.o.Audit.QueryAudit(r.Context(), q.filter)
	if err != nil {
		c.o.Log.Error().Err(err).Msg("webconsole: audit query")
		return nil, false, err
	}
	slices.Reverse(all)
	var out []record.AuditEntry
	skip := q.page * auditPage
	for _, e := range all {
		if (!q.until.IsZero() && !e.At.Before(q.until)) || (q.instance != "" && e.Instance != q.instance) ||
			(q.person != "" && string(e.RequestedBy) != q.person && string(e.ApprovedBy) != q.person) ||
			!c.o.Approvals.Approves(id, e.Conv) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if len(out) == auditPage {
			return out, true, nil
		}
		out = append(out, e)
	}
	return out, false, nil
}

// audit serves the audit search, as a page or (audit.json) as JSON.
func (c *Console) audit(w http.ResponseWriter, r *http.Request) {
	s, ok := c.signedIn(w, r)
	if !ok {
		return
	}
	q, ok := parseAudit(r.URL.Query())
	if !ok {
		plain(w, http.StatusBadRequest, "A search field is not valid: dates are YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC), fields at most 200 bytes.")
		return
	}
	entries, more, err := c.search(r, s.identity, q)
	if err != nil {
		plain(w, http.StatusInternalServerError, "Could not read the audit (storage error).")
		return
	}
	if r.URL.Path == Pattern+"audit.json" {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", `attachment; filename="gatehouse-audit.json"`)
		if err := c.o.WriteJSON(w, entries); err != nil {
			c.o.Log.Error().Err(err).Msg("webconsole: audit JSON")
		}
		return
	}
	auditPageOf(w, s, r.URL.Query(), q.page, entries, more)
}
