package webconsole

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// auditFields are the search form's fields: name, label, input type.
var auditFields = []struct{ name, label, typ markup }{
	{"since", "from (UTC)", "datetime-local"}, {"until", "to (UTC)", "datetime-local"},
	{"conv", "conversation", "text"}, {"person", "person", "text"}, {"tool", "tool", "text"},
	{"outcome", "outcome", "text"}, {"instance", "instance", "text"}, {"token", "request", "text"},
}

// auditPageOf writes the search form and one page of entries.
func auditPageOf(w http.ResponseWriter, s session, q url.Values, page int, entries []record.AuditEntry, more bool) {
	var d doc
	d.top("Audit", s)
	d.tag(`<form method="get" action="/web/audit" class="search">`)
	for _, f := range auditFields {
		d.tag(`<label>` + f.label + ` <input type="` + f.typ + `" name="` + f.name + `" maxlength="200" value="`)
		d.text(q.Get(string(f.name)))
		d.tag(`"></label> `)
	}
	d.tag(`<button>Search</button></form><p>`)
	q.Del("page")
	d.link(Pattern+"audit.json?"+q.Encode(), "Download this search as JSON")
	d.tag(`</p><table><tr><th>time</th><th>outcome</th><th>tool</th><th>conversation</th><th>asked by</th><th>resolved by</th><th>request</th><th>detail</th></tr>`)
	for _, e := range entries {
		d.el("<tr><td>", "</td>", when(e.At))
		d.el("<td>", "</td>", e.Outcome)
		d.el("<td>", "</td>", e.Tool)
		d.el("<td>", "</td>", e.Conv)
		d.el("<td>", "</td>", string(e.RequestedBy))
		d.el("<td>", "</td><td>", string(e.ApprovedBy))
		if e.Token != "" {
			d.link(Pattern+"audit?token="+url.QueryEscape(e.Token), e.Token)
		}
		d.el("</td><td>", "</td></tr>", e.Detail)
	}
	d.tag("</table>")
	if len(entries) == 0 {
		d.tag("<p>No entry matches.</p>")
	}
	if page > 0 {
		q.Set("page", strconv.Itoa(page-1))
		d.link(Pattern+"audit?"+q.Encode(), "newer")
		d.tag(" ")
	}
	if more {
		q.Set("page", strconv.Itoa(page+1))
		d.link(Pattern+"audit?"+q.Encode(), "older")
	}
	d.send(w, http.StatusOK)
}
