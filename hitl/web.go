package hitl

import (
	"context"
	"slices"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// What the web console (webconsole) asks of the broker: who may resolve
// a request, what a held write_file call would do to its file, and a
// decision taken on a page. A decision goes through the same path as a
// button press (authorised, four-eyes per person, first answer wins), its
// notices go to the request's conversations, and its audit entries say
// "via web".

// viaKey marks a context whose resolution came through a gateway that is
// no chat (the web console): the audit entries it writes say so.
type viaKey struct{}

// via returns detail with the gateway of ctx's resolution, if any.
func via(ctx context.Context, detail string) string {
	g, _ := ctx.Value(viaKey{}).(string)
	if g == "" {
		return detail
	}
	return joinDetail(detail, "via "+g)
}

// joinDetail joins two audit details with "; ".
func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// MayResolve reports whether id may approve or deny a: an approver, an
// approver a's conversation's profile adds, or an approver of an
// escalation step taken for it. Four-eyes is checked when it is approved.
func (b *Broker) MayResolve(id core.Identity, a record.Approval) bool {
	if b.IsApprover(id) || b.escalatedTo(a, id) {
		return true
	}
	return b.o.Profiles != nil && slices.Contains(b.o.Profiles.Approvers(a.Conv), id)
}

// OwnRequest reports whether a was asked for by id's person, who may not
// approve it while self-approval is off.
func (b *Broker) OwnRequest(id core.Identity, a record.Approval) bool {
	return !b.o.AllowSelfApproval && b.samePerson(a.RequestedBy, id)
}

// WriteChange is what a held write_file call would do to its file as it
// is now, for a page: Text is the unified diff's hunks, or the whole new
// content of a new file; hidden runes escaped, tabs kept.
type WriteChange struct {
	Path           string
	New            bool
	TooLarge       bool // over the size a diff is made of: Text is the new content
	Added, Deleted int
	Text           string
}

// Change returns what a's call would do to its file, when it is a
// write_file call of a file of the workspace.
func (b *Broker) Change(a record.Approval) (WriteChange, bool) {
	p, ok := previewWrite(b.o.Workspace, a.Call)
	if !ok {
		return WriteChange{}, false
	}
	c := WriteChange{Path: p.Path, New: p.New, TooLarge: !p.Diffed, Added: p.Diff.Added, Deleted: p.Diff.Deleted}
	switch {
	case p.New || !p.Diffed:
		c.Text = graphicKeepTabs(p.Content)
	default:
		c.Text = graphicKeepTabs(p.Diff.Hunks)
	}
	return c, true
}

// Decide resolves token for from as a button press does, with reason for
// a deny, from gateway (a page of the web console: "web"), and returns
// the short outcome. The outcome notices go to the request's own
// conversations; the audit entries say "via <gateway>".
func (b *Broker) Decide(ctx context.Context, gateway string, from core.Identity, token string, d core.ApprovalDecision, reason string) string {
	tok, ok := NormalizeToken(token)
	if !ok {
		return "unknown request"
	}
	a, err := b.o.Store.Approval(ctx, tok)
	if err != nil {
		return "unknown request"
	}
	ctx = context.WithValue(ctx, viaKey{}, gateway)
	if d != core.DecisionDeny {
		return b.Press(ctx, from, a.Conv, tok, d, nil)
	}
	cmd := Command{Verb: VerbDeny, Token: tok, Reason: reason}
	if !b.authorised(ctx, from, a.Conv, cmd) {
		return "not authorised"
	}
	ans := b.resolve(ctx, from, a.Conv, cmd)
	ans.begin(false)
	return ans.toast
}

// ApprovesAnything reports whether id is an approver of hitl.approvers or
// of a step of hitl.escalate (a profile's approvers are the caller's to
// add: the broker knows them by conversation only).
func (b *Broker) ApprovesAnything(id core.Identity) bool {
	return b.IsApprover(id) || b.escalationApprover(id)
}

// pageLine is the line of a request that links to its page in the
// web console, "" when it is off.
func (b *Broker) pageLine(token string) string {
	if b.o.Page == nil {
		return ""
	}
	return "\nOn the web: " + b.o.Page(token)
}
