package app

import (
	"context"
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/llm"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/webconsole"
)

// Bounds of the web console's conversations page.
const (
	webConversations = 100 // conversations listed
	webSaid          = 300 // bytes of the last message shown
)

// webViews are the web console's read-only pages' sources.
type webViews struct{ a *App }

// Cluster is /status's lines about the instances and leases, the
// schedules, the MCP servers, and each gateway's readiness.
func (v webViews) Cluster(ctx context.Context) []webconsole.Section {
	a := v.a
	out := []webconsole.Section{{Title: "Instances and leases", Lines: a.member.StatusLines(ctx, core.Conversation{})}}
	var sched []string
	for _, s := range a.sched.Schedules() {
		sched = append(sched, fmt.Sprintf("%s — %s in %s, next run %s", s.Name, s.Cron, s.Conv.Key(), s.Next.UTC().Format("2006-01-02 15:04 UTC")))
	}
	out = append(out, webconsole.Section{Title: "Schedules", Lines: sched})
	if a.mcp != nil {
		out = append(out, webconsole.Section{Title: "MCP servers", Lines: a.mcp.StatusLines(ctx, core.Conversation{})})
	}
	var gws []string
	for _, gw := range a.gateways {
		state := "running"
		if r, ok := gw.(gateways.Readier); ok {
			if err := r.Ready(); err != nil {
				state = "not ready: " + err.Error()
			}
		}
		gws = append(gws, gw.Name()+": "+state)
	}
	return append(out, webconsole.Section{Title: "Gateways", Lines: gws})
}

// Conversations lists those with messages in the last day: profile,
// today's usage against the budgets, pending requests, and the last
// thing a person said there when viewer approves it.
func (v webViews) Conversations(ctx context.Context, viewer core.Identity) ([]webconsole.Conversation, error) {
	a, now := v.a, time.Now()
	active, err := a.store.ActiveConversations(ctx, now.Add(-24*time.Hour), webConversations)
	if err != nil {
		return nil, err
	}
	pending, err := a.broker.Pending(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]webconsole.Conversation, 0, len(active))
	for _, act := range active {
		c := webconsole.Conversation{Key: act.Conv, Last: act.Last}
		conv, err := core.ParseConversation(act.Conv)
		if err == nil {
			c.Profile = webApprovals{a}.Profile(conv)
		}
		for _, p := range pending {
			if p.Conv.Key() == act.Conv {
				c.Pending++
			}
		}
		if c.Usage, err = a.budget.StatusLines(ctx, act.Conv, now); err != nil {
			return nil, err
		}
		if (webApprovals{a}).Approves(viewer, act.Conv) {
			c.Said = v.lastSaid(ctx, act.Conv)
		}
		out = append(out, c)
	}
	return out, nil
}

// lastSaid is the last message of a person in conv, shortened.
func (v webViews) lastSaid(ctx context.Context, conv string) string {
	msgs, err := v.a.store.Load(ctx, conv)
	if err != nil {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return textutil.Graphic(textutil.Shorten(msgs[i].Content, webSaid))
		}
	}
	return ""
}
