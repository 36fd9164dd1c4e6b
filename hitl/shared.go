package hitl

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// DefaultLeaseTTL is how long a dead instance's approved run waits before
// another instance marks it interrupted, when Options.LeaseTTL is zero
// (store.lease_ttl's default).
const DefaultLeaseTTL = 15 * time.Second

// SharedStore is a Store that several instances share (PostgreSQL). With
// it (and Options.Instance set) the broker records which instance runs an
// approved call, and marks interrupted only the runs of instances that are
// gone: at start-up those of its own earlier process (same name), and, on
// every sweep, those of any other instance whose heartbeat is older than
// Options.LeaseTTL. A store without it (SQLite: one process) keeps the
// one-process recovery: every executing approval found at start-up.
type SharedStore interface {
	Store
	// ClaimApprovalOn is ClaimApproval, recording instance as the one that
	// runs the call.
	ClaimApprovalOn(ctx context.Context, instance, token string, to record.Status, by core.Identity, note string, now time.Time) (record.Approval, error)
	// InterruptRuns moves to interrupted, with note, every executing
	// approval claimed at or before now-window by an instance other than
	// self whose last heartbeat is before now-window (or that has none),
	// and, when own is true, every executing approval claimed by self (an
	// earlier process of this name: call it so only before this one
	// claims anything). It returns those it moved: in one conditional
	// UPDATE, so each is moved, and returned, to exactly one caller.
	InterruptRuns(ctx context.Context, self string, own bool, window time.Duration, note string, now time.Time) ([]record.Approval, error)
}

// ResolutionNotifier tells the other instances sharing a store that an
// approval was resolved (PostgreSQL's LISTEN/NOTIFY), so that the instance
// whose gateways sent the request messages updates them in place: those
// messages are known only to the process that sent them.
type ResolutionNotifier interface {
	// NotifyResolved tells every listener that the approval token changed
	// state; from names the instance telling.
	NotifyResolved(ctx context.Context, from, token string) error
	// ListenResolved calls on for each notification until ctx ends. It
	// calls listening each time it has begun to listen, and dropped with
	// the reason each time it could not listen or the connection dropped,
	// before it tries again (notifications sent meanwhile are lost); it
	// returns nil once ctx has ended. The callbacks must not block for
	// long.
	ListenResolved(ctx context.Context, listening func(), on func(from, token string), dropped func(error)) error
}

// interruptedNote is the note of a run found executing whose process is
// gone.
const interruptedNote = "the bot stopped while this action was running; not run again"

// sharedStore returns the store as a SharedStore when several instances
// share it and this broker has a name among them.
func (b *Broker) sharedStore() (SharedStore, bool) {
	s, ok := b.o.Store.(SharedStore)
	return s, ok && b.o.Instance != ""
}

// claim moves a pending approval to to, recording this instance as the
// runner when the store is shared.
func (b *Broker) claim(ctx context.Context, token string, to record.Status, by core.Identity, note string) (record.Approval, error) {
	if s, ok := b.sharedStore(); ok {
		return s.ClaimApprovalOn(ctx, b.o.Instance, token, to, by, note, b.o.Now())
	}
	return b.o.Store.ClaimApproval(ctx, token, to, by, note, b.o.Now())
}

// interruptDead marks interrupted, and reports, the runs of instances
// that are gone (own: this instance's earlier process's too) and returns
// how many it marked.
func (b *Broker) interruptDead(ctx context.Context, s SharedStore, own bool) (int, error) {
	list, err := s.InterruptRuns(ctx, b.o.Instance, own, b.o.LeaseTTL, interruptedNote, b.o.Now())
	if err != nil {
		return 0, fmt.Errorf("hitl: interrupt runs of instances gone: %w", err)
	}
	for _, a := range list {
		b.reportInterrupted(ctx, a)
	}
	return len(list), nil
}

// reportInterrupted logs, audits, announces and reports to the LLM an
// approval just moved to interrupted.
func (b *Broker) reportInterrupted(ctx context.Context, a record.Approval) {
	defer b.decide(a.RequestedBy)()
	// Recorded in the store already: the report must not be lost to a
	// shutdown that begins now.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	b.log.Warn().Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).Str("instance", a.Instance).
		Msg("hitl: run interrupted: its instance stopped; not re-running it")
	b.audit(ctx, a, "interrupted", a.Note)
	b.announce(ctx, a, interruptedNotice(a))
	b.queue(a, llmInterrupted(a))
}

// tellOthers tells the other instances sharing the store that a's state
// changed, so that the one that sent its request messages updates them.
// A failure is logged: the notices still go out as replies.
func (b *Broker) tellOthers(ctx context.Context, token string) {
	n, ok := b.o.Store.(ResolutionNotifier)
	if !ok || b.o.Instance == "" {
		return
	}
	if err := n.NotifyResolved(ctx, b.o.Instance, token); err != nil {
		b.log.Warn().Err(err).Str("approval", b.ref(token)).Msg("hitl: could not tell the other instances of a resolution")
	}
}

// maxNotifiedToken bounds the token a notification may carry.
const maxNotifiedToken = 64

// listen updates this instance's request messages when another instance
// resolves an approval, until ctx ends. started is called once, when it
// first listens or first failed to.
func (b *Broker) listen(ctx context.Context, n ResolutionNotifier, started func()) {
	var once sync.Once
	tokens := make(chan string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case tok := <-tokens:
				b.resolvedElsewhere(ctx, tok)
			}
		}
	}()
	err := n.ListenResolved(ctx, func() { once.Do(started) }, func(from, token string) {
		if from == b.o.Instance || token == "" || len(token) > maxNotifiedToken || strings.ContainsAny(token, " \n") {
			return
		}
		select {
		case tokens <- token:
		default:
			b.log.Warn().Msg("hitl: resolutions from other instances arrive faster than they are applied; one request message keeps its buttons")
		}
	}, func(err error) {
		once.Do(started)
		b.log.Warn().Err(err).Msg("hitl: lost the connection that hears other instances' resolutions; connecting again")
	})
	if err != nil && ctx.Err() == nil {
		b.log.Error().Err(err).Msg("hitl: listening for other instances' resolutions stopped")
	}
	<-done
}

// resolvedElsewhere tells this instance's gateways what became of the
// approval token, which another instance resolved: each updates the
// request messages it sent in place.
func (b *Broker) resolvedElsewhere(ctx context.Context, token string) {
	a, err := b.o.Store.Approval(ctx, token)
	if err != nil {
		b.log.Warn().Err(err).Str("approval", b.ref(token)).Msg("hitl: could not read an approval another instance resolved")
		return
	}
	if a.Status == record.StatusPending {
		return
	}
	res := b.resolution(a)
	for _, c := range b.seenBy(ctx, a) {
		b.d.Resolved(ctx, c, res)
	}
}
