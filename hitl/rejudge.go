package hitl

import (
	"context"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// rejudge asks Options.Policy what it decides now of a's call, as the
// engine would for a turn of a's conversation and requester; denied is
// true when it refuses it.
func (b *Broker) rejudge(ctx context.Context, a record.Approval) (d core.Decision, denied bool) {
	if b.o.Policy == nil {
		return core.Decision{}, false
	}
	d = b.o.Policy.Rejudge(ctx, core.Action{Kind: core.ActionTool, Conv: a.Conv, From: a.RequestedBy, Call: a.Call})
	return d, d.Verdict == core.Deny
}

// policyRefused refuses to run a claimed approval whose call this
// instance's policy, as it is now, denies: it records the approval failed
// once, audits the refusal, tells the conversations that saw the request
// and conv (the approver's), and gives the LLM the reason, as a deny in a
// turn would.
func (b *Broker) policyRefused(ctx context.Context, a record.Approval, conv core.Conversation, d core.Decision) answer {
	b.log.Warn().Str("approval", b.ref(a.Token)).Str("tool", a.Call.Name).Str("rule", d.Rule).
		Msg("hitl: approved call not run: the policy in force here denies it")
	a.Status, a.Note = record.StatusFailed, "refused by the policy in force when it was approved: "+denyReason(d)
	if err := b.o.Store.FinishApproval(ctx, a.Token, a.Status, a.Note, b.o.Now()); err != nil {
		b.log.Error().Err(err).Str("approval", b.ref(a.Token)).Msg("hitl: could not record a refused run")
	}
	b.audit(ctx, a, "refused", "policy: "+d.Rule)
	b.announce(ctx, a, policyNotice(a, d, b.o.Instance), conv)
	b.queue(a, llmPolicyRefused(a, d))
	return answer{toast: "refused — the policy denies it"}
}

// denyReason is a Deny's reason with the rule that gave it.
func denyReason(d core.Decision) string {
	reason := d.Reason
	if reason == "" {
		reason = "the policy forbids it"
	}
	if d.Rule != "" {
		reason += " (" + d.Rule + ")"
	}
	return reason
}

// policyNotice tells people an approved call was refused by the policy in
// force on the instance that was to run it (instance, "" with one
// process).
func policyNotice(a record.Approval, d core.Decision, instance string) string {
	where := "the policy now in force"
	if instance != "" {
		where = fmt.Sprintf("the policy of instance %s", instance)
	}
	return fmt.Sprintf("Refused: %s (request %s) was approved by %s but did not run: %s denies it: %s.",
		callRef(a), a.Token, a.ResolvedBy, where, denyReason(d))
}

// llmPolicyRefused is the outcome signal text of an approved call the
// policy in force refused: the reason, as a deny in a turn gives it.
func llmPolicyRefused(a record.Approval, d core.Decision) string {
	reason := d.Reason
	if reason == "" {
		reason = "the policy forbids it"
	}
	return fmt.Sprintf("[gatehouse] %s was approved by %s but was not run: refused: %s. Tell the user it is not allowed; do not propose it again.",
		llmCall(a), a.ResolvedBy, reason)
}
