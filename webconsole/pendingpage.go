package webconsole

import (
	"net/http"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
)

// pendingPage writes the requests, each with its buttons.
func pendingPage(w http.ResponseWriter, title string, s session, list []request) {
	var d doc
	d.top(title, s)
	for _, q := range list {
		d.tag(`<section class="req"><h2>`)
		d.el("", " <small>", q.Call.Name)
		d.el("", "</small></h2><dl>", q.Token)
		d.row("asked by", string(q.RequestedBy))
		d.row("conversation", q.Conv.Key())
		if q.Profile != "" {
			d.row("profile", q.Profile)
		}
		d.row("rule", q.Rule)
		if q.Reason != "" {
			d.row("why held", q.Reason)
		}
		d.row("waiting", human(q.Waiting))
		d.row("expires in", human(q.Left))
		d.tag("</dl>")
		open := markup("<details open>")
		if q.Change != nil {
			d.change(*q.Change)
			open = "<details>"
		}
		d.tag(open + "<summary>the whole call</summary>")
		d.el("<pre>", "</pre></details>", q.Args)
		d.buttons(q, s.csrf)
		d.tag("</section>")
	}
	if len(list) == 0 {
		d.tag("<p>Nothing waits for you.</p>")
	}
	d.send(w, http.StatusOK)
}

// change writes a write_file call's diff, its lines coloured.
func (d *doc) change(c Change) {
	what := "+" + itoa(c.Added) + " −" + itoa(c.Deleted) + " lines against the file as it is now"
	switch {
	case c.New:
		what = "new file"
	case c.TooLarge:
		what = "too large to diff; the whole new content"
	}
	d.el("<p>", "</p>", c.Path+": "+what)
	d.tag(`<pre class="diff">`)
	for l := range strings.Lines(c.Text) {
		l = strings.TrimSuffix(l, "\n")
		cl := markup(`<span>`)
		switch {
		case c.New || c.TooLarge:
		case strings.HasPrefix(l, "+"):
			cl = `<span class="a">`
		case strings.HasPrefix(l, "-"):
			cl = `<span class="d">`
		}
		d.el(cl, "</span>\n", l)
	}
	d.tag("</pre>")
}

// buttons writes the form that decides q.
func (d *doc) buttons(q request, csrf string) {
	d.tag(`<form method="post" action="`)
	d.text(PagePath(q.Token))
	d.tag(`">`)
	d.hidden("csrf", csrf)
	if q.Own {
		d.tag("<p>You asked for this: another approver must approve it; you may deny it.</p>")
	} else if core.ApprovedOnce(q.Call.Name) { // a skill: exactly the content shown, once
		d.tag(`<button class="ok" name="decision" value="approve">Approve</button>`)
	} else {
		d.tag(`<button class="ok" name="decision" value="approve">Approve</button><button name="decision" value="always">Approve always</button><button name="decision" value="grant">Approve 30 min</button>`)
	}
	d.tag(`<input name="reason" maxlength="500" placeholder="reason (for a deny)" aria-label="reason"><button class="no" name="decision" value="deny">Deny</button></form>`)
}
