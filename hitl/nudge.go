package hitl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// nudgeState is a broker's bookkeeping of nudges.
type nudgeState struct {
	mu sync.Mutex
	// next is the earliest time a nudge or an expiry is due that this
	// broker knows of (zero: none); Run sweeps then.
	next time.Time
	// dms are the direct conversations opened with escalation approvers.
	dms map[core.Identity]core.Conversation
}

// Nudges say what happens to a request nobody answers before it expires
// (hitl.remind_after, hitl.escalate). Their state is in the store
// (record.Approval's Reminded and Escalated), set by one conditional
// update each: of several instances sweeping, one sends each nudge, and
// a restart neither sends one again nor loses one that is due.
type Nudges struct {
	// RemindAfter is how long after a request was raised it is sent
	// again, once, to every conversation that got it; 0: never.
	RemindAfter time.Duration
	// Escalate are the steps taken, in order, each After its own delay.
	Escalate []Escalation
}

// Escalation is one step of hitl.escalate.
type Escalation struct {
	// After is how long after the request was raised the step is taken.
	After time.Duration
	// Approvers may /show, approve or deny the escalated request, and
	// nothing else (they need be on no allow list); each gets it in a
	// direct message where their gateway can open one.
	Approvers []core.Identity
	// Notify are conversations that get the escalated request.
	Notify []core.Conversation
}

// validate checks nudges as the configuration does.
func (n Nudges) validate() error {
	if n.RemindAfter < 0 {
		return fmt.Errorf("hitl: remind_after %s: must be 0 (never) or positive", n.RemindAfter)
	}
	var prev time.Duration
	for i, e := range n.Escalate {
		if e.After <= prev {
			return fmt.Errorf("hitl: escalate[%d]: after %s must be positive and later than the step before", i, e.After)
		}
		prev = e.After
		for j, id := range e.Approvers {
			if g, rest, ok := splitIdentity(id); !ok || g == "" || rest == "" || id.IsSchedule() {
				return fmt.Errorf("hitl: escalate[%d].approvers[%d]: identity %q: want gateway:id, e.g. slack:U0123ABCD", i, j, id)
			}
		}
		for j, c := range e.Notify {
			if c.Gateway == "" || c.Chat == "" {
				return fmt.Errorf("hitl: escalate[%d].notify[%d]: target %q: want gateway:chat[:thread]", i, j, c.Key())
			}
		}
	}
	return nil
}

// SetNudges replaces the reminder and escalation steps (a configuration
// reload). Pending requests keep what they had (a reminder sent, the
// steps taken) and go on under the new steps; on error nothing changes.
func (b *Broker) SetNudges(n Nudges) error {
	if err := n.validate(); err != nil {
		return err
	}
	b.nudges.Store(&n)
	b.wakeRun()
	return nil
}

// nudgeDue sends the reminders and takes the escalation steps that are
// due for the pending approvals in list, and returns the earliest time
// something (a nudge or an expiry) is due next; zero when nothing is.
func (b *Broker) nudgeDue(ctx context.Context, list []record.Approval) time.Time {
	n := *b.nudges.Load()
	var next time.Time
	due := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, a := range list {
		now := b.o.Now()
		if !now.Before(a.Expires) {
			continue // the expiry sweep's
		}
		due(a.Expires)
		if n.RemindAfter > 0 && a.Reminded.IsZero() {
			if at := a.Created.Add(n.RemindAfter); now.Before(at) {
				due(at)
			} else {
				b.remind(ctx, &a, now)
			}
		}
		for a.Escalated < len(n.Escalate) {
			step := a.Escalated
			if at := a.Created.Add(n.Escalate[step].After); now.Before(at) {
				due(at)
				break
			}
			if !b.escalate(ctx, &a, step, n.Escalate[step], now) {
				break
			}
		}
	}
	return next
}

// remind marks a reminded and, when this caller marked it, sends the
// request again to every conversation that got it. It reports whether
// it sent it.
func (b *Broker) remind(ctx context.Context, a *record.Approval, now time.Time) bool {
	if err := b.o.Store.MarkReminded(ctx, a.Token, now); err != nil {
		if !errors.Is(err, record.ErrNotPending) && !errors.Is(err, record.ErrNotFound) {
			b.log.Error().Err(err).Str("approval", b.ref(a.Token)).Msg("hitl: could not record a reminder; trying again on the next sweep")
		}
		return false
	}
	a.Reminded = now
	b.audit(ctx, *a, "reminded", "")
	b.log.Info().Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).Msg("hitl: nobody answered: request sent again")
	head := fmt.Sprintf("⏰ Reminder: nobody has answered for %s.", waited(now.Sub(a.Created)))
	b.prompt(ctx, *a, head, now, b.seenBy(ctx, *a))
	return true
}

// escalate takes escalation step step of a when this caller marks it:
// the request goes to the step's notify conversations and its approvers'
// direct messages, and the asking conversation is told in one line. It
// reports whether it took the step.
func (b *Broker) escalate(ctx context.Context, a *record.Approval, step int, e Escalation, now time.Time) bool {
	if err := b.o.Store.MarkEscalated(ctx, a.Token, step, now); err != nil {
		if !errors.Is(err, record.ErrNotPending) && !errors.Is(err, record.ErrNotFound) {
			b.log.Error().Err(err).Str("approval", b.ref(a.Token)).Int("step", step).Msg("hitl: could not record an escalation; trying again on the next sweep")
		}
		return false
	}
	seen := make(map[string]bool)
	for _, c := range b.seenBy(ctx, *a) {
		seen[c.Key()] = true
	}
	a.Escalated = step + 1
	var to []core.Conversation
	for _, c := range append(slices.Clone(e.Notify), b.directs(ctx, a.Token, e.Approvers)...) {
		if !seen[c.Key()] {
			seen[c.Key()] = true
			to = append(to, c)
		}
	}
	asked := escalatedWho(e)
	b.log.Info().Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).Int("step", step+1).Str("asked", asked).Msg("hitl: nobody answered: request escalated")
	b.audit(ctx, *a, "escalated", fmt.Sprintf("step %d: %s", step+1, asked))
	head := fmt.Sprintf("⏫ Escalated: nobody has answered for %s.", waited(now.Sub(a.Created)))
	if len(e.Approvers) > 0 {
		head += fmt.Sprintf(" %s may /show, approve or deny this request.", joinAnd(identityList(e.Approvers)))
	}
	b.prompt(ctx, *a, head, now, to)
	b.reply(ctx, core.Action{Kind: core.ActionReply, Conv: a.Conv, Text: fmt.Sprintf(
		"Nobody has answered request %s (%s) for %s: escalated to %s.", a.Token, callRef(*a), waited(now.Sub(a.Created)), asked)})
	return true
}

// prompt sends the request a, headed by head, with its buttons, to
// every conversation of to, as Hold sent it: what had to be shortened
// goes with it whole.
func (b *Broker) prompt(ctx context.Context, a record.Approval, head string, now time.Time, to []core.Conversation) {
	p := requestPrompt(a)
	p.AllowGrant = false
	h := b.view(a)
	h.head = head
	for _, conv := range to {
		if err := b.promptTo(ctx, conv, h, now, "", p); err != nil {
			b.log.Error().Err(err).Str("conv", conv.Key()).Str("approval", b.ref(a.Token)).Msg("hitl: could not deliver a reminder or an escalated request")
		}
	}
}

// escalatedWho names who an escalation step asks: its approvers and its
// notify conversations.
func escalatedWho(e Escalation) string {
	who := identityList(e.Approvers)
	for _, c := range e.Notify {
		who = append(who, c.Key())
	}
	return joinAnd(who)
}

// identityList returns the identities as strings.
func identityList(ids []core.Identity) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// waited renders how long a request has waited: "10 min", "1 h 30 min",
// "3s" under a minute.
func waited(d time.Duration) string {
	if d < time.Minute {
		return humanDuration(d)
	}
	m := int(d.Round(time.Minute) / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%d min", m)
	}
	if m%60 == 0 {
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}

// nudgedText says, for /pending, how long a has waited and whether it
// was reminded or escalated: "waiting 12 min, reminded, escalated".
func nudgedText(a record.Approval, now time.Time) string {
	parts := []string{"waiting " + waited(now.Sub(a.Created))}
	if !a.Reminded.IsZero() {
		parts = append(parts, "reminded")
	}
	switch {
	case a.Escalated == 1:
		parts = append(parts, "escalated")
	case a.Escalated > 1:
		parts = append(parts, fmt.Sprintf("escalated %d times", a.Escalated))
	}
	return strings.Join(parts, ", ")
}

// NudgeDue sends the reminders and takes the escalation steps that are
// due, and notes when the next nudge or expiry is (Run sweeps then). Run
// calls it on every sweep.
func (b *Broker) NudgeDue(ctx context.Context) error {
	list, err := b.o.Store.Approvals(ctx, record.StatusPending)
	var next time.Time // on an error, the next tick tries again
	if err == nil {
		next = b.nudgeDue(ctx, list)
	}
	b.nudged.mu.Lock()
	b.nudged.next = next
	b.nudged.mu.Unlock()
	if err != nil {
		return fmt.Errorf("hitl: reminders and escalations: %w", err)
	}
	return nil
}

// noteDue notes when a, just raised, is first due (its first nudge, else
// its expiry) and wakes Run to sweep then.
func (b *Broker) noteDue(a record.Approval) {
	n := b.nudges.Load()
	at := a.Expires
	if n.RemindAfter > 0 {
		at = minTime(at, a.Created.Add(n.RemindAfter))
	}
	if len(n.Escalate) > 0 {
		at = minTime(at, a.Created.Add(n.Escalate[0].After))
	}
	b.nudged.mu.Lock()
	if b.nudged.next.IsZero() || at.Before(b.nudged.next) {
		b.nudged.next = at
	}
	b.nudged.mu.Unlock()
	b.wakeRun()
}

// untilDue is how long Run waits for the next thing due: at most
// Options.SweepEvery (the tick sweeps then anyway).
func (b *Broker) untilDue() time.Duration {
	b.nudged.mu.Lock()
	next := b.nudged.next
	b.nudged.mu.Unlock()
	if next.IsZero() {
		return b.o.SweepEvery
	}
	return min(max(next.Sub(b.o.Now()), time.Millisecond), b.o.SweepEvery)
}

// wakeRun wakes Run, which then waits anew for what is due.
func (b *Broker) wakeRun() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// minTime returns the earlier of x and y.
func minTime(x, y time.Time) time.Time {
	if y.Before(x) {
		return y
	}
	return x
}
