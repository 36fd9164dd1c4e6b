package hitl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// HandleCommand handles an approval command (/approve, /deny, /pending,
// /show, /rules, /unallow, /audit) and reports whether s was one. It replies to
// s.Conv through the Dispatcher.
//
// Only KindMessage signals are considered: outcome signals, errors and
// heartbeats (text the core or a tool produced) are never parsed, whatever
// they contain. The engine calls HandleCommand only for messages from
// people, never for the bot's own messages or LLM output. Even so,
// authorisation rests on s.From being an approver, never on the token.
func (b *Broker) HandleCommand(ctx context.Context, s core.Signal) bool {
	if s.Kind != core.KindMessage {
		return false
	}
	cmd, ok := ParseCommand(s.Text)
	if !ok {
		return false
	}
	ans := b.command(ctx, s.From, s.Conv, cmd)
	if ans.reply != "" {
		b.reply(ctx, core.Action{Kind: core.ActionReply, Conv: s.Conv, Text: ans.reply, ReplyTo: s.MessageID})
	}
	// An approved action starts only now that its acknowledgement was
	// handed to the gateway.
	ans.begin(ans.reply != "")
	return true
}

// Press resolves a button press exactly like the typed command, with the
// same authorisation, and returns a short outcome for a toast. ack, when
// not nil, is called with that outcome before an approved action starts
// (gateways.Approvals).
func (b *Broker) Press(ctx context.Context, from core.Identity, conv core.Conversation, token string, d core.ApprovalDecision, ack func(toast string)) string {
	ans := b.press(ctx, from, conv, token, d)
	if ack != nil {
		ack(ans.toast)
	}
	// A press is acknowledged by its toast, delivered above or by the
	// gateway once Press returns; no chat message acknowledges it, so the
	// outcome notice is the first word in every chat and carries the
	// standing allow line.
	ans.begin(false)
	return ans.toast
}

// press resolves a button press and returns the answer, its run not begun.
func (b *Broker) press(ctx context.Context, from core.Identity, conv core.Conversation, token string, d core.ApprovalDecision) answer {
	cmd := Command{Verb: VerbApprove, Always: d == core.DecisionApproveAlways}
	switch d {
	case core.DecisionApprove, core.DecisionApproveAlways:
	case core.DecisionApproveGrant:
		cmd.For = core.ButtonGrant
	case core.DecisionDeny:
		cmd.Verb = VerbDeny
	default:
		return answer{toast: "unknown button"}
	}
	tok, ok := NormalizeToken(token)
	if !ok {
		return answer{toast: "unknown request"}
	}
	cmd.Token = tok
	if !b.authorised(ctx, from, conv, cmd) {
		return answer{toast: "not authorised"}
	}
	return b.resolve(ctx, from, conv, cmd)
}

// command runs cmd for from and returns the answer; its reply is "" when
// the outcome notices already reached conv. The caller sends the reply,
// then begins the answer's run.
func (b *Broker) command(ctx context.Context, from core.Identity, conv core.Conversation, cmd Command) answer {
	text := func(s string) answer { return answer{reply: s} }
	if !b.authorised(ctx, from, conv, cmd) {
		return text(fmt.Sprintf("Not authorised (your identity is %s). Only the configured approvers can use /%s.", from, cmd.Verb))
	}
	if cmd.Problem != "" {
		return text(upperFirst(cmd.Problem) + ".\n" + cmd.Verb.Usage())
	}
	switch cmd.Verb {
	case VerbApprove, VerbDeny:
		return b.resolve(ctx, from, conv, cmd)
	case VerbPending:
		return text(b.pendingText(ctx, from))
	case VerbShow:
		return text(b.showCommand(ctx, cmd.Token))
	case VerbRules:
		return text(b.rulesText(ctx))
	case VerbUnallow:
		return text(b.unallow(ctx, from, conv, cmd.Rule))
	case VerbAudit:
		return text(b.auditText(ctx, conv, cmd))
	}
	return text(cmd.Verb.Usage())
}

// authorised reports whether from is an approver, or, for an approve or
// deny of a known request, an approver its conversation's profile adds,
// or, for an approve, deny or show of a request escalated to them, an
// approver of that escalation step; a refused attempt is logged and, when
// it names a known request, audited.
func (b *Broker) authorised(ctx context.Context, from core.Identity, conv core.Conversation, cmd Command) bool {
	if b.IsApprover(from) || b.escalationAdmits(ctx, from, cmd) {
		return true
	}
	resolves := cmd.Token != "" && (cmd.Verb == VerbApprove || cmd.Verb == VerbDeny)
	var a record.Approval
	known := false
	if resolves {
		var err error
		a, err = b.o.Store.Approval(ctx, cmd.Token)
		known = err == nil
	}
	if known && b.o.Profiles != nil && slices.Contains(b.o.Profiles.Approvers(a.Conv), from) {
		return true
	}
	b.log.Warn().Str("from", string(from)).Str("conv", conv.Key()).Str("verb", string(cmd.Verb)).
		Str("approval", b.ref(cmd.Token)).Msg("hitl: command from an identity that is not an approver refused")
	if known {
		b.refuse(ctx, a, from, cmd.Verb, "not an approver")
	}
	return false
}

// refuse audits a turned-down attempt by from to resolve a.
func (b *Broker) refuse(ctx context.Context, a record.Approval, from core.Identity, verb Verb, why string) {
	b.log.Warn().Str("from", string(from)).Str("approval", b.ref(a.Token)).Str("why", why).Msg("hitl: resolution refused")
	a.ResolvedBy = from
	b.audit(ctx, a, "refused", fmt.Sprintf("/%s by %s refused: %s", verb, from, why))
}

// pendingText lists the live approvals from may resolve.
func (b *Broker) pendingText(ctx context.Context, from core.Identity) string {
	list, err := b.Pending(ctx)
	if err != nil {
		return b.storeFailed(err, "").reply
	}
	if len(list) == 0 {
		return "No pending approvals."
	}
	now := b.o.Now()
	lines := []string{fmt.Sprintf("%d pending approval(s):", len(list))}
	for _, a := range list {
		lines = append(lines, pendingLine(a, now, !b.o.AllowSelfApproval && b.samePerson(a.RequestedBy, from)))
	}
	return strings.Join(append(lines, "Answer with /approve <token> or /deny <token> [reason]; /show <token> prints one in full."), "\n")
}

// showCommand prints the full action of an approval.
func (b *Broker) showCommand(ctx context.Context, token string) string {
	a, err := b.o.Store.Approval(ctx, token)
	switch {
	case errors.Is(err, record.ErrNotFound):
		return fmt.Sprintf("There is no request %s. /pending lists the open ones.", token)
	case err != nil:
		return b.storeFailed(err, token).reply
	}
	now, change, h := b.o.Now(), "", b.view(a)
	if a.Status == record.StatusPending && now.Before(a.Expires) {
		change = writeChange(h)
	}
	return showText(a, now, joinLines(change, presentedShow(h)))
}

// rulesText lists the standing allows, then the grants.
func (b *Broker) rulesText(ctx context.Context) string {
	list, err := b.StandingAllows(ctx)
	if err != nil {
		b.log.Error().Err(err).Msg("hitl: could not list standing allows")
		return "Could not read the standing allows (storage error)."
	}
	grants, err := b.grantLines(ctx)
	if err != nil {
		b.log.Error().Err(err).Msg("hitl: could not list grants")
		return "Could not read the grants (storage error)."
	}
	lines := []string{"No standing allows. /approve <token> always adds one for exactly that call; /approve <token> for 30m allows identical calls in its conversation for 30 min."}
	if len(list) > 0 {
		lines = []string{"Standing allows (exactly this tool with exactly these arguments; /unallow <number> removes one):"}
	}
	for _, s := range list {
		lines = append(lines, fmt.Sprintf("#%d %s %s — added by %s, %s%s",
			s.ID, s.Tool, codeSpan(clip(textutil.GraphicJSON(s.Args), maxFieldRunes)), s.AddedBy, s.Added.UTC().Format("2006-01-02 15:04 UTC"), boundText(s)))
	}
	return strings.Join(append(lines, grants...), "\n")
}

// unallow removes standing allow or grant id (one sequence numbers both).
func (b *Broker) unallow(ctx context.Context, from core.Identity, conv core.Conversation, id int64) string {
	s, err := b.o.Standing.RemoveStandingAllow(ctx, id)
	switch {
	case errors.Is(err, record.ErrNotFound):
		if reply, found := b.removeGrant(ctx, from, id); found {
			return reply
		}
		return fmt.Sprintf("There is no standing allow #%d and no grant #%d. /rules lists them.", id, id)
	case err != nil:
		b.log.Error().Err(err).Int64("rule", id).Msg("hitl: could not remove standing allow")
		return "Could not remove the standing allow (storage error)."
	}
	b.log.Info().Int64("rule", id).Str("tool", s.Tool).Str("by", string(from)).Msg("hitl: standing allow removed")
	e := record.AuditEntry{At: b.o.Now(), Conv: conv.Key(), Tool: s.Tool, Args: clip(s.Args, maxArgsForLLM),
		ApprovedBy: from, Outcome: "unallowed", Detail: fmt.Sprintf("standing allow #%d removed", id)}
	if err := b.o.Audit.AppendAudit(ctx, e); err != nil {
		b.log.Error().Err(err).Msg("hitl: audit append failed")
	}
	return fmt.Sprintf("Removed standing allow #%d: %s %s now needs approval again.", id, s.Tool, codeSpan(clip(textutil.GraphicJSON(s.Args), maxFieldRunes)))
}

// upperFirst capitalises the first letter of an ASCII sentence.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// boundText names, for /rules, the files whose content a standing allow is
// bound to (those that existed when it was added).
func boundText(s record.StandingAllow) string {
	var names []string
	for p, v := range s.Files {
		if strings.HasPrefix(v, "sha256:") {
			names = append(names, p)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	verb := "stay"
	if len(names) == 1 {
		verb = "stays"
	}
	for i, n := range names {
		names[i] = codeSpan(n)
	}
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("%d more", len(names)-3))
	}
	return "; while " + joinAnd(names) + " " + verb + " unchanged"
}
