package app

import (
	"cmp"
	"context"
	"io"
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/auditfmt"
	"github.com/gatehouse-bot/gatehouse/store/record"
	"github.com/gatehouse-bot/gatehouse/webconsole"
)

// mountWeb serves the web console at /web/ on http.listen when
// http.console is on, and adds /web to the chat commands.
func (a *App) mountWeb(cfg *config.Config) error {
	if !cfg.HTTP.Console || cfg.HTTP.Listen == "" {
		return nil
	}
	c, err := webconsole.New(webconsole.Options{
		Store: a.store, Audit: a.store, Approvals: webApprovals{a}, Chat: a.engine,
		Views:     webViews{a},
		WriteJSON: func(out io.Writer, entries []record.AuditEntry) error { return auditfmt.WriteAudit(out, entries, true) },
		PublicURL: webOrigin(cfg),
		Session:   cfg.HTTP.ConsoleSession.D(),
		Log:       a.log.With().Str("component", "webconsole").Logger(),
	})
	if err != nil {
		return err
	}
	a.routes = append(a.routes, route{pattern: webconsole.Pattern, handler: c})
	a.engine.UseHITL(a.broker, webCommands{b: a.broker, web: c})
	return nil
}

// webOrigin is where people's browsers reach the web console.
func webOrigin(cfg *config.Config) string {
	return strings.TrimSuffix(cmp.Or(cfg.HTTP.PublicURL, "http://"+cfg.HTTP.Listen), "/")
}

// webPage is the address of a request's page, for the requests in chat;
// nil when the web console is off.
func webPage(cfg *config.Config) func(token string) string {
	if !cfg.HTTP.Console || cfg.HTTP.Listen == "" {
		return nil
	}
	origin := webOrigin(cfg)
	return func(token string) string { return origin + webconsole.PagePath(token) }
}

// webCommands are the broker's chat commands and /web. It names the
// broker's abilities the engine looks for rather than embedding the
// broker, whose every method would be wrapped (the release binary is
// near its size limit, 17.5 MB).
type webCommands struct {
	b   *hitl.Broker
	web *webconsole.Console
}

var (
	_ core.GuestCommandHandler = webCommands{}
	_ core.CommandLister       = webCommands{}
	_ core.StatusReporter      = webCommands{}
)

func (w webCommands) HandleCommand(ctx context.Context, s core.Signal) bool {
	return w.web.HandleCommand(ctx, s) || w.b.HandleCommand(ctx, s)
}

func (w webCommands) HandleGuestCommand(ctx context.Context, s core.Signal) bool {
	return w.b.HandleGuestCommand(ctx, s)
}

func (w webCommands) StatusLines(ctx context.Context, conv core.Conversation) []string {
	return w.b.StatusLines(ctx, conv)
}

func (w webCommands) Commands() []core.CommandHelp {
	return append(w.b.Commands(), w.web.Commands()...)
}

// webApprovals is the broker and the profiles as the web console asks them.
type webApprovals struct{ a *App }

func (w webApprovals) Pending(ctx context.Context) ([]record.Approval, error) {
	return w.a.broker.Pending(ctx)
}

func (w webApprovals) MaySignIn(id core.Identity) bool {
	if w.a.broker.ApprovesAnything(id) {
		return true
	}
	for _, p := range w.a.profiles.List() {
		if slices.Contains(p.Approvers, id) {
			return true
		}
	}
	return false
}

func (w webApprovals) Approves(id core.Identity, conv string) bool {
	if w.a.broker.IsApprover(id) {
		return true
	}
	c, err := core.ParseConversation(conv)
	return err == nil && slices.Contains(w.a.profiles.Approvers(c), id)
}

func (w webApprovals) MayResolve(id core.Identity, ap record.Approval) bool {
	return w.a.broker.MayResolve(id, ap)
}

func (w webApprovals) OwnRequest(id core.Identity, ap record.Approval) bool {
	return w.a.broker.OwnRequest(id, ap)
}

func (w webApprovals) Profile(conv core.Conversation) string {
	if p := w.a.profiles.For(conv); p != nil {
		return p.Name
	}
	return ""
}

func (w webApprovals) Change(ap record.Approval) (webconsole.Change, bool) {
	c, ok := w.a.broker.Change(ap)
	return webconsole.Change(c), ok
}

func (w webApprovals) Decide(ctx context.Context, from core.Identity, token string, d core.ApprovalDecision, reason string) string {
	return w.a.broker.Decide(ctx, webconsole.Gateway, from, token, d, reason)
}
