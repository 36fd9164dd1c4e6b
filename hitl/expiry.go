package hitl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// Run expires overdue approvals every Options.SweepEvery and submits the
// outcome signals that tell the LLM what became of held actions, until ctx
// ends. At start it expires what became overdue while the bot was down.
// When ctx ends it refuses new runs, gives those still going Options.Grace
// to finish, then cancels them, and returns once they are recorded.
// It does not recover runs cut by a crash: the caller calls Recover once,
// before anything can claim an approval.
//
// Outcome signals are submitted here, not by the goroutine that resolved the
// approval, because Submit blocks while the target conversation's queue is
// full, and an approval resolved in its own conversation would then wait on
// its own worker.
func (b *Broker) Run(ctx context.Context) error {
	listening, heard := make(chan struct{}), make(chan struct{})
	if n, ok := b.o.Store.(ResolutionNotifier); ok && b.o.Instance != "" {
		go func() {
			defer close(listening)
			b.listen(ctx, n, func() { close(heard) })
		}()
		select { // Ready once it hears the others (or could not)
		case <-heard:
		case <-ctx.Done():
		}
	} else {
		close(listening)
	}
	b.sweep(ctx)
	b.readyOnce.Do(func() { close(b.ready) })
	t := time.NewTicker(b.o.SweepEvery)
	defer t.Stop()
	// due fires when a nudge or an expiry this broker knows of is due,
	// so that each comes within moments of its time, not of a tick.
	due := time.NewTimer(b.o.SweepEvery)
	defer due.Stop()
	for {
		b.drain(ctx)
		due.Reset(b.untilDue())
		select {
		case <-ctx.Done():
			<-listening
			b.stopRuns()
			b.dropOutbox()
			return nil
		case <-t.C:
			b.sweep(ctx)
		case <-due.C:
			b.sweep(ctx)
		case <-b.wake:
		}
	}
}

// sweep is one expiry sweep: it records the ends of runs and the
// interruptions Recover could not record, then expires overdue approvals; with a SharedStore it also marks
// interrupted the runs of other instances that are gone.
func (b *Broker) sweep(ctx context.Context) {
	b.retryEnds(ctx)
	b.RetryInterrupted(ctx)
	if _, err := b.ExpireDue(ctx); err != nil {
		b.log.Error().Err(err).Msg("hitl: expiry sweep failed")
	}
	if err := b.NudgeDue(ctx); err != nil {
		b.log.Error().Err(err).Msg("hitl: reminder and escalation sweep failed")
	}
	b.ExpireGrants(ctx)
	if s, ok := b.sharedStore(); ok {
		if _, err := b.interruptDead(ctx, s, false); err != nil {
			b.log.Error().Err(err).Msg("hitl: sweep of the runs of instances gone failed")
		}
	}
}

// Ready is closed once Run has finished its start-up work (overdue
// approvals expired).
func (b *Broker) Ready() <-chan struct{} { return b.ready }

// ExpireDue expires every pending approval past its expiry, announcing each
// in its conversations and telling the LLM. It returns how many it expired.
func (b *Broker) ExpireDue(ctx context.Context) (int, error) {
	list, err := b.o.Store.Approvals(ctx, record.StatusPending)
	if err != nil {
		return 0, fmt.Errorf("hitl: expire: %w", err)
	}
	now, n := b.o.Now(), 0
	for _, a := range list {
		if !now.Before(a.Expires) && b.expire(ctx, a) {
			n++
		}
	}
	return n, nil
}

// expire moves a pending, overdue approval to expired. Only the caller whose
// FinishApproval succeeds announces it, so it is announced once. When
// FinishApproval fails for another reason than a concurrent resolution, the
// failure is logged and counted and the approval stays pending and overdue:
// the next sweep tries again.
func (b *Broker) expire(ctx context.Context, a record.Approval) bool {
	note := "no decision in time"
	defer b.decide(a.RequestedBy)()
	if err := b.o.Store.FinishApproval(ctx, a.Token, record.StatusExpired, note, b.o.Now()); err != nil {
		if !errors.Is(err, record.ErrNotPending) {
			b.finishFailed(err, a, "expire")
		}
		return false
	}
	a.Status, a.Note = record.StatusExpired, note
	// Recorded in the store: the report must not be lost to a shutdown
	// (another instance will not expire it again).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	b.o.Metrics.Approval("expired", b.o.Now().Sub(a.Created))
	b.log.Info().Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).Msg("hitl: approval expired")
	b.audit(ctx, a, "expired", "")
	b.announce(ctx, a, expiredNotice(a))
	b.queue(a, llmExpired(a))
	return true
}

// Recover marks approvals left executing by a previous process as
// interrupted: they may or may not have run, so they are never run again.
// Each is audited, announced and reported to the LLM (the signal waits for
// Run). It marks every executing approval, so it must be called once at
// start-up, before anything can claim one. It returns how many it marked.
// One whose mark fails to be recorded is logged, counted and remembered:
// each sweep of Run (or RetryInterrupted) tries it again.
//
// With a SharedStore, other instances may be running approved calls right
// now: Recover then marks only the runs of this instance's earlier process
// (Options.Instance) and of instances already gone (heartbeat older than
// Options.LeaseTTL); Run's sweeps mark those that die later.
func (b *Broker) Recover(ctx context.Context) (int, error) {
	if s, ok := b.sharedStore(); ok {
		return b.interruptDead(ctx, s, true)
	}
	list, err := b.o.Store.Approvals(ctx, record.StatusExecuting)
	if err != nil {
		return 0, fmt.Errorf("hitl: recover: %w", err)
	}
	n := 0
	for _, a := range list {
		if b.interrupt(ctx, a) {
			n++
		}
	}
	return n, nil
}

// RetryInterrupted records the interruptions that Recover (or an earlier
// retry) could not record, and returns how many it recorded now. Run calls
// it on every sweep.
func (b *Broker) RetryInterrupted(ctx context.Context) int {
	b.mu.Lock()
	list := slices.Collect(maps.Values(b.unrecovered))
	b.mu.Unlock()
	// sort.Slice: see TestReleaseSortsShareOneShape (internal/archtest).
	sort.Slice(list, func(i, j int) bool { return list[i].Created.Before(list[j].Created) })
	n := 0
	for _, a := range list {
		if b.interrupt(ctx, a) {
			n++
		}
	}
	return n
}

// interrupt marks an approval found executing at start-up as interrupted
// and reports whether it did. A failure other than a concurrent finish
// leaves it in b.unrecovered for the next sweep.
func (b *Broker) interrupt(ctx context.Context, a record.Approval) bool {
	a.Status, a.Note = record.StatusInterrupted, interruptedNote
	defer b.decide(a.RequestedBy)()
	err := b.o.Store.FinishApproval(ctx, a.Token, a.Status, a.Note, b.o.Now())
	b.mu.Lock()
	if err != nil && !errors.Is(err, record.ErrNotPending) {
		b.unrecovered[a.Token] = a
	} else {
		delete(b.unrecovered, a.Token)
	}
	b.mu.Unlock()
	if err != nil {
		if !errors.Is(err, record.ErrNotPending) {
			b.finishFailed(err, a, "mark interrupted")
		}
		return false
	}
	b.log.Warn().Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).Msg("hitl: run interrupted by a restart; not re-running it")
	b.audit(ctx, a, "interrupted", a.Note)
	b.announce(ctx, a, interruptedNotice(a))
	b.queue(a, llmInterrupted(a))
	return true
}

// finishFailed logs and counts a FinishApproval that failed in a sweep or
// in Recover; the caller leaves the approval due for the next sweep.
func (b *Broker) finishFailed(err error, a record.Approval, what string) {
	b.finishFailures.Add(1)
	b.o.Metrics.ApprovalStoreFailure()
	b.log.Error().Err(err).Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).
		Msgf("hitl: could not %s the approval; trying again on the next sweep", what)
}

// Stats are counters of a Broker's life, for the app to read (and, later,
// to export as metrics).
type Stats struct {
	// FinishFailures counts FinishApproval calls that failed when expiring
	// an approval, marking one interrupted at start-up or recording the end
	// of a run (each is retried, and each failed try counts).
	FinishFailures int64
}

// Stats returns the broker's counters.
func (b *Broker) Stats() Stats {
	return Stats{FinishFailures: b.finishFailures.Load()}
}

// queue adds the outcome signal for a's conversation to the outbox and
// wakes Run. The signal is from the requester: the engine takes From as on
// whose behalf the follow-up turn acts, so a call the LLM proposes next is
// held as the requester's, and four-eyes still keeps him from approving it.
func (b *Broker) queue(a record.Approval, text string) {
	s := core.Signal{Kind: core.KindApprovalOutcome, Conv: a.Conv, From: a.RequestedBy, Text: text, At: b.o.Now()}
	b.mu.Lock()
	b.outbox = append(b.outbox, s)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// drain submits queued outcome signals in order until the outbox is empty
// or ctx ends.
func (b *Broker) drain(ctx context.Context) {
	for {
		b.mu.Lock()
		if len(b.outbox) == 0 {
			b.mu.Unlock()
			return
		}
		s := b.outbox[0]
		b.followUps[s.From]++
		b.mu.Unlock()
		s.Done = b.followUpDone(s.From)
		err := b.d.Submit(ctx, s)
		if err != nil {
			s.Done()
		}
		if err != nil && ctx.Err() != nil {
			return // kept in the outbox; Run logs what is left
		}
		if err != nil {
			b.log.Error().Err(err).Str("conv", s.Conv.Key()).Msg("hitl: could not submit approval outcome")
		}
		b.mu.Lock()
		b.outbox = b.outbox[1:]
		b.settleLocked()
		b.mu.Unlock()
	}
}

// dropOutbox logs outcome signals that could not be submitted before
// shutdown.
func (b *Broker) dropOutbox() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.outbox {
		b.log.Warn().Str("conv", s.Conv.Key()).Msg("hitl: shutting down: approval outcome not delivered to the LLM")
	}
	b.outbox = nil
	b.settleLocked()
}

// followUpDone returns the Done of an outcome signal on behalf of
// requester: it ends the follow-up's count, once.
func (b *Broker) followUpDone(requester core.Identity) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.followUps[requester]--; b.followUps[requester] <= 0 {
				delete(b.followUps, requester)
			}
		})
	}
}

// Outstanding reports whether anything requested by requester is still
// going after its turn: an approval waiting for a decision (one past its
// expiry too, until the sweep has expired it), a decision being announced,
// an approved action running, or its outcome not yet submitted or its
// follow-up turn not finished. The scheduler asks it before a schedule's
// next run.
//
// The store is read first: an approval leaves pending only after decide
// has counted it, and each state after that is in place before the one
// before it ends, so an approval that is no longer pending in the store
// is seen in memory.
func (b *Broker) Outstanding(ctx context.Context, requester core.Identity) (bool, error) {
	// On a shared store executing too: the run may be another
	// instance's, which this instance's memory does not see.
	statuses := []record.Status{record.StatusPending}
	if _, ok := b.sharedStore(); ok {
		statuses = append(statuses, record.StatusExecuting)
	}
	pending, err := b.o.Store.Approvals(ctx, statuses...)
	if err != nil {
		return false, fmt.Errorf("hitl: outstanding: %w", err)
	}
	if slices.ContainsFunc(pending, func(a record.Approval) bool { return a.RequestedBy == requester }) {
		return true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	busy := b.followUps[requester] > 0 || b.deciding[requester] > 0
	for _, s := range b.outbox {
		busy = busy || s.From == requester
	}
	for _, r := range b.active {
		busy = busy || r.requester == requester
	}
	return busy, nil
}

// decide counts an approval of requester as being decided, from before it
// leaves pending (or executing, at a restart) in the store until the
// returned func is called, once its run has started or its outcome is
// queued: Outstanding sees it all along. The func may be called more than
// once; it counts once.
func (b *Broker) decide(requester core.Identity) func() {
	b.mu.Lock()
	b.deciding[requester]++
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.deciding[requester]--; b.deciding[requester] <= 0 {
				delete(b.deciding, requester)
			}
		})
	}
}
