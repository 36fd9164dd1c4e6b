package hitl

import (
	"context"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// requestPrompt is what a gateway needs to draw the request a: its
// buttons and its reply hint. A call approved only once
// (core.ApprovedOnce: enabling or writing a skill) offers no "always" and
// no grant: a person approves exactly the content shown, each time.
func requestPrompt(a record.Approval) core.ApprovalPrompt {
	once := core.ApprovedOnce(a.Call.Name)
	p := core.ApprovalPrompt{
		Token: a.Token, Tool: a.Call.Name, Summary: summarize(a.Call), Hint: replyHint(a.Token),
		AllowAlways: !once, AllowGrant: !once, Expires: a.Expires,
	}
	if once {
		p.Hint = onceHint(a.Token)
	}
	return p
}

// onceHint is the reply hint of a request approved only once.
func onceHint(token string) string {
	return fmt.Sprintf("Reply /approve %[1]s or /deny %[1]s [reason]; an approval covers exactly this content, once.", token)
}

// onceRefused answers an "always" or "for 30m" approval of a call
// approved only once: nothing is approved, the request stays pending.
func onceRefused(a record.Approval) answer {
	return answer{toast: "approved only once: use Approve",
		reply: fmt.Sprintf("%s is approved only once, for exactly the content shown: no standing allow and no grant. "+
			"Nothing was approved; reply /approve %s to approve this request once.", a.Call.Name, a.Token)}
}

// showHintFor is the reply hint of the request a sent without buttons
// because the whole call could not go with it.
func showHintFor(a record.Approval) string {
	if core.ApprovedOnce(a.Call.Name) {
		return fmt.Sprintf("Reply /approve %[1]s or /deny %[1]s [reason] once /show %[1]s has printed the whole call; an approval covers exactly this content, once.", a.Token)
	}
	return showFirstHint(a.Token)
}

// ApproverDirect is implemented by a Dispatcher some of whose
// conversations nobody reads (a skill's own, "skills:<name>"): the
// requests of such a conversation go, besides hitl.notify, to the direct
// messages of hitl.approvers where their gateways can open one, as a
// held call's request goes to the conversation that asked, where its
// people are.
type ApproverDirect interface {
	ToApprovers(conv core.Conversation) bool
}

// approverDirects returns the approvers' direct conversations that the
// request a goes to: none unless the dispatcher says a's conversation is
// read by nobody (ApproverDirect).
func (b *Broker) approverDirects(ctx context.Context, a record.Approval) []core.Conversation {
	ad, ok := b.d.(ApproverDirect)
	if !ok || !ad.ToApprovers(a.Conv) {
		return nil
	}
	return b.directs(ctx, a.Token, b.Approvers())
}
