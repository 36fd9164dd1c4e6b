package hitl

import (
	"context"
	"errors"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// answer is the broker's response to one attempt to resolve an approval.
type answer struct {
	// toast is the short outcome for a button press.
	toast string
	// reply answers a typed command; empty when the outcome notice already
	// went to the caller's conversation.
	reply string
	// start starts the approved action's run; nil when nothing was
	// approved. The caller must call it exactly once, after it delivered
	// reply (replied true) or handed toast back (replied false): the run's
	// outcome can then never overtake the acknowledgement, because the run
	// does not exist before it was sent.
	start func(replied bool)
}

// begin calls ans.start, if any, once the acknowledgement is out.
func (ans answer) begin(replied bool) {
	if ans.start != nil {
		ans.start(replied)
	}
}

// resolve approves or denies the approval named by cmd for from, who acted
// in conv. The caller has checked that from is an approver. It is the one
// path for typed commands and button presses.
func (b *Broker) resolve(ctx context.Context, from core.Identity, conv core.Conversation, cmd Command) answer {
	a, err := b.o.Store.Approval(ctx, cmd.Token)
	switch {
	case errors.Is(err, record.ErrNotFound):
		return answer{toast: "unknown request", reply: fmt.Sprintf("There is no request %s. /pending lists the open ones.", cmd.Token)}
	case err != nil:
		return b.storeFailed(err, cmd.Token)
	}
	if cmd.Verb == VerbDeny {
		return b.deny(ctx, from, conv, a, cmd.Reason)
	}
	if (cmd.Always || cmd.For > 0) && core.ApprovedOnce(a.Call.Name) {
		return onceRefused(a)
	}
	if !b.o.AllowSelfApproval && b.samePerson(a.RequestedBy, from) {
		b.refuse(ctx, a, from, VerbApprove, "self-approval is off")
		return answer{toast: "you cannot approve your own request",
			reply: "You asked for this action, so another approver must approve it (self-approval is off). You may /deny it."}
	}
	return b.approve(ctx, from, conv, a, cmd)
}

// approve claims a for execution and starts its run in the background: the
// caller (a conversation's worker, or a button press the platform wants answered
// within seconds) is answered at once, and the outcome is announced when the
// run ends.
func (b *Broker) approve(ctx context.Context, from core.Identity, conv core.Conversation, a record.Approval, cmd Command) answer {
	if !b.admit() {
		return answer{toast: "not run — shutting down",
			reply: fmt.Sprintf("The bot is shutting down, so request %s did not run; it stays pending. Approve it again once the bot is back.", a.Token)}
	}
	decided := b.decide(a.RequestedBy) // until the run has started
	claimed, err := b.claim(ctx, a.Token, record.StatusExecuting, from, "")
	if err != nil {
		b.release()
		decided()
		if errors.Is(err, record.ErrNotPending) {
			return b.notPending(ctx, claimed)
		}
		return b.storeFailed(err, a.Token)
	}
	a = claimed
	b.o.Metrics.Approval("approved", b.o.Now().Sub(a.Created))
	if ok, file := b.digestHolds(a); !ok {
		b.release()
		defer decided()
		return b.mismatch(ctx, a, conv, file)
	}
	if d, denied := b.rejudge(ctx, a); denied {
		b.release()
		defer decided()
		return b.policyRefused(ctx, a, conv, d)
	}
	extra, auditMore := b.allowMore(ctx, from, a, cmd)
	b.audit(ctx, a, "approved", extra)
	auditMore()
	return answer{
		toast: "approved — running…",
		reply: joinLines(fmt.Sprintf("Approved: running %s (request %s); the outcome follows.", callRef(a), a.Token), extra),
		// No lock is held while it runs: the claim above makes the run
		// unique. A typed command's reply said extra in conv already.
		start: func(replied bool) {
			b.start(a, extra, conv, replied)
			decided()
		},
	}
}

// profileNoStanding is said when an approver a conversation's profile
// adds asks for a standing allow.
const profileNoStanding = "No standing allow added: one applies in every conversation, and only hitl.approvers may add it; this call runs once."

// addStanding adds the standing allow of an "always" approval, bound to the
// workspace files the call names as they are now, and returns a line saying
// so ("" when always is false).
func (b *Broker) addStanding(ctx context.Context, a record.Approval, always bool) string {
	if !always {
		return ""
	}
	s, err := b.bindStanding(ctx, a)
	if err != nil {
		b.log.Error().Err(err).Str("approval", b.ref(a.Token)).Msg("hitl: could not add standing allow")
		return "The standing allow could not be saved; this call will need approval again."
	}
	b.log.Info().Int64("rule", s.ID).Str("tool", s.Tool).Str("by", string(s.AddedBy)).Msg("hitl: standing allow added")
	return fmt.Sprintf("Standing allow #%d added: exactly this call runs without approval from now on, while the workspace files it names stay as they are (/rules, /unallow %d).", s.ID, s.ID)
}

// bindStanding stores the standing allow for a's call, bound to the
// workspace files it names as they are now.
func (b *Broker) bindStanding(ctx context.Context, a record.Approval) (record.StandingAllow, error) {
	files, err := bindFiles(b.o.Workspace, a.Call)
	if err != nil {
		return record.StandingAllow{}, err
	}
	s, err := b.o.Standing.AddStandingAllow(ctx, record.StandingAllow{
		Tool: a.Call.Name, Args: a.Call.Args, AddedBy: a.ResolvedBy, Added: b.o.Now(), Conv: a.Conv.Key(), Files: files,
	})
	if err != nil {
		return record.StandingAllow{}, fmt.Errorf("hitl: add standing allow: %w", err)
	}
	return s, nil
}

// mismatch refuses to run a claimed approval whose call no longer matches
// its digest; file says only the file its request showed a diff of
// changed since.
func (b *Broker) mismatch(ctx context.Context, a record.Approval, conv core.Conversation, file bool) answer {
	notice, detail := mismatchNotice(a), "digest mismatch"
	a.Status, a.Note = record.StatusFailed, "refused: the action does not match what was approved"
	if file {
		b.log.Warn().Str("approval", b.ref(a.Token)).Str("tool", a.Call.Name).Msg("hitl: the file of an approved write changed since its diff was shown; not running it")
		notice, detail = fileChangedNotice(a), "file changed since the diff was shown"
		a.Note = "refused: the file changed since its diff was shown"
	} else {
		b.log.Error().Str("approval", b.ref(a.Token)).Str("tool", a.Call.Name).Msg("hitl: approved action does not match its digest; not running it")
	}
	if err := b.o.Store.FinishApproval(ctx, a.Token, a.Status, a.Note, b.o.Now()); err != nil {
		b.log.Error().Err(err).Str("approval", b.ref(a.Token)).Msg("hitl: could not record a refused run")
	}
	b.audit(ctx, a, "refused", detail)
	b.announce(ctx, a, notice, conv)
	b.queue(a, llmMismatch(a))
	return answer{toast: "refused — action changed"}
}

// deny claims a as denied by from and reports it.
func (b *Broker) deny(ctx context.Context, from core.Identity, conv core.Conversation, a record.Approval, reason string) answer {
	defer b.decide(a.RequestedBy)() // until the outcome is queued
	claimed, err := b.o.Store.ClaimApproval(ctx, a.Token, record.StatusDenied, from, reason, b.o.Now())
	if errors.Is(err, record.ErrNotPending) {
		return b.notPending(ctx, claimed)
	}
	if err != nil {
		return b.storeFailed(err, a.Token)
	}
	b.o.Metrics.Approval("denied", b.o.Now().Sub(claimed.Created))
	b.audit(ctx, claimed, "denied", reason)
	b.announce(ctx, claimed, denyNotice(claimed), conv)
	b.queue(claimed, llmDenied(claimed))
	return answer{toast: "denied"}
}

// notPending explains why a could not be claimed: it expired (announced
// now if nobody had yet), or someone resolved it first.
func (b *Broker) notPending(ctx context.Context, a record.Approval) answer {
	if a.Status == record.StatusPending || a.Status == record.StatusExpired {
		b.expire(ctx, a)
		return answer{toast: "expired", reply: fmt.Sprintf("Request %s expired at %s; it will not run.", a.Token, clockTime(a.Expires))}
	}
	what := "approved"
	switch a.Status {
	case record.StatusDenied:
		what = "denied"
	case record.StatusExecuting:
		what = "approved (running now)"
	case record.StatusExecuted:
		what = "approved (it ran)"
	case record.StatusFailed:
		what = "approved (it ran and failed)"
	case record.StatusInterrupted:
		what = "approved (the run was interrupted)"
	}
	return answer{
		toast: fmt.Sprintf("already %s by %s", what, a.ResolvedBy),
		reply: fmt.Sprintf("Request %s was already %s by %s.", a.Token, what, a.ResolvedBy),
	}
}

// storeFailed logs a store error and tells the person.
func (b *Broker) storeFailed(err error, token string) answer {
	b.log.Error().Err(err).Str("approval", b.ref(token)).Msg("hitl: approval store failed")
	return answer{toast: "error — try again", reply: "Could not read or update the request (storage error); nothing ran. Try again."}
}

// announce tells every conversation that saw the request, and conv where it
// was resolved, what became of it: each gateway that can first updates the
// request message in place, then the notice follows as a reply.
func (b *Broker) announce(ctx context.Context, a record.Approval, text string, conv ...core.Conversation) {
	res := b.resolution(a)
	for _, c := range b.seenBy(ctx, a, conv...) {
		b.d.Resolved(ctx, c, res)
		b.reply(ctx, core.Action{Kind: core.ActionReply, Conv: c, Text: text})
	}
	b.tellOthers(ctx, a.Token)
}

// resolution is what gateways are told about a's outcome, as of now.
func (b *Broker) resolution(a record.Approval) core.ApprovalResolution {
	return core.ApprovalResolution{Token: a.Token, Status: string(a.Status), By: a.ResolvedBy, At: b.o.Now()}
}

// joinLines joins the non-empty lines.
func joinLines(lines ...string) string {
	out := ""
	for _, l := range lines {
		if l == "" {
			continue
		}
		if out != "" {
			out += "\n"
		}
		out += l
	}
	return out
}
