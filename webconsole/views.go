package webconsole

import (
	"context"
	"net/http"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// Section is a part of the cluster page: a title and its lines.
type Section struct {
	Title string
	Lines []string
}

// Conversation is a conversation active in the last day.
type Conversation struct {
	Key, Profile string
	Last         time.Time
	Pending      int
	// Usage says today's tokens and cost against the budgets.
	Usage []string
	// Said is the last message of a person in it: "" unless the viewer
	// approves the conversation.
	Said string
}

// Views are the read-only pages besides the approvals (app fills them).
type Views interface {
	// Cluster is the instances with their versions and leases, the
	// schedules with their next run, the MCP servers and the gateways.
	Cluster(ctx context.Context) []Section
	// Conversations are those active in the last day, as viewer may see
	// them.
	Conversations(ctx context.Context, viewer core.Identity) ([]Conversation, error)
}

// viewRoutes adds the conversations and cluster pages.
func (c *Console) viewRoutes(mux *http.ServeMux) {
	if c.o.Views == nil {
		return
	}
	mux.HandleFunc("GET /web/cluster", c.cluster)
	mux.HandleFunc("GET /web/conversations", c.conversations)
}

// cluster writes the cluster and health page.
func (c *Console) cluster(w http.ResponseWriter, r *http.Request) {
	s, ok := c.signedIn(w, r)
	if !ok {
		return
	}
	var d doc
	d.top("Cluster and health", s)
	for _, sec := range c.o.Views.Cluster(r.Context()) {
		d.el("<h2>", "</h2><ul>", sec.Title)
		for _, l := range sec.Lines {
			d.el("<li>", "</li>", l)
		}
		d.tag("</ul>")
	}
	d.send(w, http.StatusOK)
}

// conversations writes the conversations active in the last day.
func (c *Console) conversations(w http.ResponseWriter, r *http.Request) {
	s, ok := c.signedIn(w, r)
	if !ok {
		return
	}
	list, err := c.o.Views.Conversations(r.Context(), s.identity)
	if err != nil {
		c.o.Log.Error().Err(err).Msg("webconsole: conversations")
		plain(w, http.StatusInternalServerError, "Could not read the conversations (storage error).")
		return
	}
	var d doc
	d.top("Conversations of the last day", s)
	for _, cv := range list {
		d.el(`<section class="req"><h2>`, "</h2><dl>", cv.Key)
		if cv.Profile != "" {
			d.row("profile", cv.Profile)
		}
		d.row("last activity", human(c.o.Now().Sub(cv.Last))+" ago")
		d.row("pending requests", itoa(cv.Pending))
		for _, u := range cv.Usage {
			d.row("today", u)
		}
		if cv.Said != "" {
			d.row("last said", cv.Said)
		}
		d.tag("</dl></section>")
	}
	if len(list) == 0 {
		d.tag("<p>No conversation in the last day.</p>")
	}
	d.send(w, http.StatusOK)
}
