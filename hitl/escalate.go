package hitl

import (
	"context"
	"slices"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// DirectOpener is a Dispatcher that can open a direct conversation with
// a person (core.Engine, through its gateways' core.DirectMessenger).
// Escalated requests go to the escalation approvers' direct messages
// only through it.
type DirectOpener interface {
	DirectConversation(ctx context.Context, id core.Identity) (core.Conversation, error)
}

// escalatedTo reports whether id is an approver of a step of
// hitl.escalate already taken for a: they may /show, approve or deny a,
// and no other request.
func (b *Broker) escalatedTo(a record.Approval, id core.Identity) bool {
	if id == "" || id.IsSchedule() {
		return false
	}
	steps := b.nudges.Load().Escalate
	for i := 0; i < a.Escalated && i < len(steps); i++ {
		if slices.Contains(steps[i].Approvers, id) {
			return true
		}
	}
	return false
}

// escalationApprover reports whether id is an approver of any step of
// hitl.escalate (of any request).
func (b *Broker) escalationApprover(id core.Identity) bool {
	for _, e := range b.nudges.Load().Escalate {
		if slices.Contains(e.Approvers, id) {
			return true
		}
	}
	return false
}

// guestVerb reports whether an escalation approver may use v, on the
// request escalated to them: /show it, approve or deny it.
func guestVerb(v Verb) bool { return v == VerbApprove || v == VerbDeny || v == VerbShow }

// escalationAdmits reports whether cmd is from an approver of an
// escalation step taken for the request it names, and a verb they may
// use on it.
func (b *Broker) escalationAdmits(ctx context.Context, from core.Identity, cmd Command) bool {
	if cmd.Token == "" || !guestVerb(cmd.Verb) || !b.escalationApprover(from) {
		return false
	}
	a, err := b.o.Store.Approval(ctx, cmd.Token)
	return err == nil && b.escalatedTo(a, from)
}

// HandleGuestCommand answers, for a sender the allow list refused, an
// /approve, /deny or /show from an approver of hitl.escalate
// (core.GuestCommandHandler): it is judged as any approval command, and
// admitted only for a request escalated to that sender. Anything else
// (another command, a sender who is no escalation approver) is not
// handled here: it goes on as a stranger's message.
func (b *Broker) HandleGuestCommand(ctx context.Context, s core.Signal) bool {
	if s.Kind != core.KindMessage || !b.escalationApprover(s.From) {
		return false
	}
	cmd, ok := ParseCommand(s.Text)
	if !ok || !guestVerb(cmd.Verb) {
		return false
	}
	return b.HandleCommand(ctx, s)
}

// seenBy returns the conversations that got request a: the asking one,
// hitl.notify, the approvers' direct messages when nobody reads the
// asking one (ApproverDirect), and those of the escalation steps taken (their notify
// conversations and their approvers' direct messages), without
// duplicates.
func (b *Broker) seenBy(ctx context.Context, a record.Approval, extra ...core.Conversation) []core.Conversation {
	steps := b.nudges.Load().Escalate
	extra = append(extra, b.approverDirects(ctx, a)...)
	for i := 0; i < a.Escalated && i < len(steps); i++ {
		extra = append(extra, steps[i].Notify...)
		extra = append(extra, b.directs(ctx, a.Token, steps[i].Approvers)...)
	}
	return b.targets(a.Conv, extra...)
}

// directs returns the direct conversations with ids that their gateways
// can open; the others are logged and left out. Each is opened once per
// process.
func (b *Broker) directs(ctx context.Context, token string, ids []core.Identity) []core.Conversation {
	opener, ok := b.d.(DirectOpener)
	var out []core.Conversation
	for _, id := range ids {
		b.nudged.mu.Lock()
		c, known := b.nudged.dms[id]
		b.nudged.mu.Unlock()
		if !known && ok {
			var err error
			if c, err = opener.DirectConversation(ctx, id); err != nil {
				b.log.Warn().Err(err).Str("identity", string(id)).Str("approval", b.ref(token)).
					Msg("hitl: no direct message to an approver; they get the request where hitl.notify (or an escalation step's notify) sends it")
				continue
			}
			b.nudged.mu.Lock()
			if b.nudged.dms == nil {
				b.nudged.dms = make(map[core.Identity]core.Conversation)
			}
			b.nudged.dms[id] = c
			b.nudged.mu.Unlock()
		}
		if c.Gateway != "" {
			out = append(out, c)
		}
	}
	return out
}

var _ core.GuestCommandHandler = (*Broker)(nil)
