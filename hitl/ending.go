package hitl

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/record"
)

// The end of an approved run is recorded twice: the approval's end state
// (FinishApproval) and its audit row. Either write may fail for a while (a
// database restarting, a connection cut); the run has happened and its
// output was shown, so a failed write is tried again, a few times at once
// and then on every sweep, until it is recorded. It is never left
// executing for a later start-up to call "interrupted … its result is
// unknown" while this process lives.
//
// The end is announced once, by one instance: when the end state cannot
// be recorded because another outcome was recorded first (record.
// ErrNotPending: an instance that took this one for dead marked the run
// interrupted, and announced that), nothing of this end is audited or
// announced. On a store several instances share, the announcement waits
// until the end state is recorded (by a sweep, if the tries at once do
// not): announced unrecorded, it could be announced again, as
// interrupted, by an instance that finds the run still executing. A
// store of its own announces after the tries at once, recorded or not.

// The tries at once of a run's end: endTries in all, waiting endFirstWait
// after the first failure and twice as long after each next, at most
// endMaxWait (about 3 s in all), within recordTimeout.
const (
	endTries     = 5
	endFirstWait = 200 * time.Millisecond
	endMaxWait   = 2 * time.Second
)

// ending is what remains to record of a run's end.
type ending struct {
	a        record.Approval // with its end Status and Note
	entry    record.AuditEntry
	finished bool // the end state is recorded (or settled otherwise)
	audited  bool
	// lost: another outcome was recorded first; this one is neither
	// audited nor announced.
	lost bool
	// shared: the announcement and the audit row wait for the end state.
	shared bool
	// announce tells what became of the run; nil once called (or lost).
	announce func(context.Context)
}

// done reports whether nothing of e is left to do.
func (e *ending) done() bool {
	return (e.finished || e.lost) && e.audited && e.announce == nil
}

// recordEnd records the end of a's run: its end state and its audit row
// (outcome a.Status, detail a.Note), trying each failed write again with
// a backoff while ctx lasts, and calls announce once (see above). What is
// still not recorded after endTries (on a shared store: when ctx ends) is
// left to the sweeps (retryEnds).
func (b *Broker) recordEnd(ctx context.Context, a record.Approval, announce func(context.Context)) {
	_, shared := b.sharedStore()
	e := &ending{a: a, entry: b.auditEntry(a, string(a.Status), a.Note), shared: shared, announce: announce}
	wait := endFirstWait
	for try := 1; ; try++ {
		b.tryEnd(ctx, e, try == 1)
		if e.done() {
			return
		}
		if (try >= endTries && !shared) || !pause(ctx, wait) {
			break
		}
		wait = min(2*wait, endMaxWait)
	}
	if !shared && e.announce != nil {
		e.announce(ctx) // the run happened: said now, recorded later
		e.announce = nil
	}
	b.log.Error().Str("approval", b.ref(a.Token)).Str("conv", a.Conv.Key()).Bool("state", e.finished).Bool("audit", e.audited).
		Msg("hitl: could not record the end of a run yet; trying again on every sweep")
	b.mu.Lock()
	b.unended[a.Token] = e
	b.mu.Unlock()
}

// tryEnd tries once each write of e still missing; first says no write
// was tried before.
func (b *Broker) tryEnd(ctx context.Context, e *ending, first bool) {
	if !e.finished && !e.lost {
		e.finished, e.lost = b.tryFinish(ctx, e.a, first)
	}
	if e.lost {
		e.audited, e.announce = true, nil
		return
	}
	if e.shared && !e.finished {
		return // the audit row and the announcement wait for the state
	}
	if e.finished && e.announce != nil {
		e.announce(ctx)
		e.announce = nil
	}
	if !e.audited {
		if err := b.o.Audit.AppendAudit(ctx, e.entry); err != nil {
			b.log.Warn().Err(err).Str("approval", b.ref(e.a.Token)).Str("outcome", e.entry.Outcome).Msg("hitl: audit append failed")
		} else {
			e.audited = true
		}
	}
}

// tryFinish records a's end state once and reports whether it is
// recorded (now, or by an earlier try whose answer was lost), or lost:
// another outcome was recorded first (logged; not retried, not
// announced here).
func (b *Broker) tryFinish(ctx context.Context, a record.Approval, first bool) (finished, lost bool) {
	err := b.o.Store.FinishApproval(ctx, a.Token, a.Status, a.Note, b.o.Now())
	if err == nil {
		return true, false
	}
	if errors.Is(err, record.ErrNotPending) || errors.Is(err, record.ErrNotFound) {
		if !first {
			if cur, cerr := b.o.Store.Approval(ctx, a.Token); cerr == nil && cur.Status == a.Status && cur.Note == a.Note {
				return true, false // an earlier try was recorded though its answer was lost
			}
		}
		b.log.Warn().Err(err).Str("approval", b.ref(a.Token)).Str("outcome", string(a.Status)).
			Msg("hitl: could not record the end of a run: settled otherwise, its end recorded elsewhere first (an instance took this one for dead); not announced here")
		return false, true
	}
	b.finishFailures.Add(1)
	b.o.Metrics.ApprovalStoreFailure()
	b.log.Warn().Err(err).Str("approval", b.ref(a.Token)).Msg("hitl: could not record the end of a run; trying again")
	return false, false
}

// retryEnds tries again, once each, the ends of runs recordEnd could not
// record, and returns how many are now recorded in full. Run calls it on
// every sweep.
func (b *Broker) retryEnds(ctx context.Context) int {
	b.mu.Lock()
	list := slices.Collect(maps.Values(b.unended))
	b.mu.Unlock()
	slices.SortFunc(list, func(x, y *ending) int { return x.a.Created.Compare(y.a.Created) })
	n := 0
	for _, e := range list {
		b.tryEnd(ctx, e, false)
		if e.done() {
			b.mu.Lock()
			delete(b.unended, e.a.Token)
			b.mu.Unlock()
			if e.lost {
				continue
			}
			b.log.Info().Str("approval", b.ref(e.a.Token)).Msg("hitl: the end of a run is recorded")
			n++
		}
	}
	return n
}

// pause waits d and reports true, or false as soon as ctx ends.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
