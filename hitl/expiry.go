package hitl

import (
	"context"
	"fmt"
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
	if _, err := b.ExpireDue(ctx); err != nil {
		b.log.Error().Err(err).Msg("hitl: expiry sweep failed")
	}
	b.readyOnce.Do(func() { close(b.ready) })
	t := time.NewTicker(b.o.SweepEvery)
	defer t.Stop()
	for {
		b.drain(ctx)
		select {
		case <-ctx.Done():
			b.stopRuns()
			b.dropOutbox()
			return nil
		case <-t.C:
			if _, err := b.ExpireDue(ctx); err != nil {
				b.log.Error().Err(err).Msg("hitl: expiry sweep failed")
			}
		case <-b.wake:
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
// FinishApproval succeeds announces it, so it is announced once.
func (b *Broker) expire(ctx context.Context, a record.Approval) bool {
	note := "no decision in time"
	if err := b.o.Store.FinishApproval(ctx, a.Token, record.StatusExpired, note, b.o.Now()); err != nil {
		return false
	}
	a.Status, a.Note = record.StatusExpired, note
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
func (b *Broker) Recover(ctx context.Context) (int, error) {
	list, err := b.o.Store.Approvals(ctx, record.StatusExecuting)
	if err != nil {
		return 0, fmt.Errorf("hitl: recover: %w", err)
	}
	n := 0
	for _, a := range list {
		a.Status, a.Note = record.StatusInterrupted, "the bot stopped while this action was running; not run again"
		if err := b.o.Store.FinishApproval(ctx, a.Token, a.Status, a.Note, b.o.Now()); err != nil {
			continue
		}
		n++
		b.log.Warn().Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).Msg("hitl: run interrupted by a restart; not re-running it")
		b.audit(ctx, a, "interrupted", a.Note)
		b.announce(ctx, a, interruptedNotice(a))
		b.queue(a, llmInterrupted(a))
	}
	return n, nil
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
		b.mu.Unlock()
		err := b.d.Submit(ctx, s)
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
