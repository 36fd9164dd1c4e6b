package hitl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestDecideFromTheWeb: a decision on a page of the web console follows
// the rules of chat (an identity that approves nothing is refused, the
// requester may not approve their own request with self-approval off,
// first answer wins), its notices go to the request's conversations, its
// audit entries say "via web", and the request carries its page's link.
func TestDecideFromTheWeb(t *testing.T) {
	h := newHarness(t, func(o *hitl.Options) {
		o.AllowSelfApproval = false
		o.Approvers = append(o.Approvers, asker)
		o.Page = func(token string) string { return "https://bot.example.com/web/r/" + token }
	})
	ctx := context.Background()
	tok := h.hold(t, lsCall)
	if req := h.lastReply(t, convA); !strings.Contains(req.Text, "On the web: https://bot.example.com/web/r/"+tok) {
		t.Errorf("the request lacks its page's link:\n%s", req.Text)
	}
	a, err := h.store.Approval(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if h.b.MayResolve(eve, a) || !h.b.MayResolve(boss, a) || !h.b.OwnRequest(asker, a) || h.b.OwnRequest(boss, a) {
		t.Error("MayResolve or OwnRequest disagree with the approvers and the requester")
	}
	if got := h.b.Decide(ctx, "web", eve, tok, core.DecisionApprove, ""); got != "not authorised" {
		t.Errorf("eve's approval = %q; want not authorised", got)
	}
	if got := h.b.Decide(ctx, "web", asker, tok, core.DecisionApprove, ""); !strings.Contains(got, "own request") {
		t.Errorf("the requester's own approval = %q; want refused", got)
	}
	if got := h.b.Decide(ctx, "web", boss, strings.ToLower(tok), core.DecisionDeny, "not on friday"); got != "denied" {
		t.Errorf("boss's deny = %q; want denied", got)
	}
	if got := h.b.Decide(ctx, "web", admin, tok, core.DecisionApprove, ""); !strings.Contains(got, "already denied by beta:boss") {
		t.Errorf("a second answer = %q; want already denied", got)
	}
	if got := h.b.Decide(ctx, "web", boss, "NOPE", core.DecisionApprove, ""); got != "unknown request" {
		t.Errorf("an unknown request = %q", got)
	}
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusDenied {
		t.Errorf("status = %s; want denied", st)
	}
	if r := h.lastReply(t, convA); !strings.Contains(r.Text, "not on friday") {
		t.Errorf("the request's conversation was not told of the deny: %q", r.Text)
	}
	es, err := h.store.QueryAudit(ctx, record.AuditFilter{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	var denied, refused int
	for _, e := range es {
		if !strings.HasSuffix(e.Detail, "via web") && e.Outcome != "requested" {
			t.Errorf("audit entry %s %q does not say via web", e.Outcome, e.Detail)
		}
		switch e.Outcome {
		case "denied":
			denied++
		case "refused":
			refused++
		}
	}
	if denied != 1 || refused != 2 {
		t.Errorf("audit = %d denied, %d refused; want 1 and 2 (eve, the requester)", denied, refused)
	}
}
