package hitl

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// DefaultGrace is how long Run lets approved actions go on after its
// context ends when Options.Grace is zero.
const DefaultGrace = 10 * time.Second

// recordTimeout bounds the bookkeeping after a run (end state, audit,
// notices). It runs on a context that shutdown does not cancel, so a run
// that ends while the bot stops is still recorded and announced, and a
// platform that cannot be reached does not hold shutdown for long.
const recordTimeout = 30 * time.Second

// admit reserves a place for one run, before its approval is claimed, so
// that a claimed approval always gets its run and its bookkeeping. It
// refuses once Run has begun to stop: the approval then stays pending.
func (b *Broker) admit() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopping {
		return false
	}
	b.running++
	b.runs.Add(1)
	return true
}

// release gives back the place admit reserved.
func (b *Broker) release() {
	b.mu.Lock()
	b.running--
	b.settleLocked()
	b.mu.Unlock()
	b.runs.Done()
}

// errRunCancelled marks the end of a run that CancelRuns cut short.
var errRunCancelled = errors.New("cancelled while running (/cancel)")

// errRunStopped marks the end of a run that shutdown cut short, past its
// grace period: like a cancelled one, it may have done part of its work,
// so it is recorded interrupted, not failed.
var errRunStopped = errors.New("stopped by shutdown while running")

// errRunFenced marks the end of a run that Options.Fence stopped: this
// instance could not show the others it is alive, and one of them may
// soon mark the run interrupted.
var errRunFenced = errors.New("stopped on this instance, which lost the database for half of store.lease_ttl (before another instance could take it for dead); not run again")

// run is one approved action going on.
type run struct {
	conv      string // the approval's conversation key
	requester core.Identity
	cancel    context.CancelFunc
	cancelled bool // by CancelRuns
}

// start begins the run of a claimed approval in a broker goroutine, under a
// context of its own that CancelRuns can end. extra is the standing allow
// line; replied says it already reached conv in the acknowledgement.
func (b *Broker) start(a record.Approval, extra string, conv core.Conversation, replied bool) {
	var ctx context.Context
	var cancel context.CancelFunc
	if b.o.Fence != nil {
		ctx, cancel = b.o.Fence.Guard(b.runCtx)
	} else {
		ctx, cancel = context.WithCancel(b.runCtx)
	}
	r := &run{conv: a.Conv.Key(), requester: a.RequestedBy, cancel: cancel}
	b.mu.Lock()
	b.nextRun++
	id := b.nextRun
	b.active[id] = r
	b.mu.Unlock()
	go func() {
		defer b.release() // last: once idle, no run is listed as active
		defer func() {
			b.mu.Lock()
			delete(b.active, id)
			b.mu.Unlock()
			cancel()
		}()
		b.execute(ctx, r, a, extra, conv, replied)
	}()
}

// CancelRuns cancels the running approved actions of conv (the
// conversation that asked for them) and returns how many it cancelled.
// Each then ends through the usual path: recorded, audited, announced and
// reported to the LLM as cancelled.
func (b *Broker) CancelRuns(conv core.Conversation) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, r := range b.active {
		if r.conv == conv.Key() && !r.cancelled {
			r.cancelled = true
			r.cancel()
			n++
		}
	}
	return n
}

// runningIn counts the approved actions of conv still running.
func (b *Broker) runningIn(conv core.Conversation) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, r := range b.active {
		if r.conv == conv.Key() {
			n++
		}
	}
	return n
}

// execute runs a claimed approval under ctx (the broker's, not the
// approver's), then records, audits and announces what became of it and
// queues the outcome for the LLM. conv is where it was approved; extra is
// said there only when the acknowledgement did not say it (replied false).
func (b *Broker) execute(ctx context.Context, r *run, a record.Approval, extra string, conv core.Conversation, replied bool) {
	began := time.Now()
	res, runErr := b.d.Act(ctx, core.Action{Kind: core.ActionTool, Conv: a.Conv, From: a.RequestedBy, Call: a.Call, Approval: a.Token})
	b.o.Metrics.ToolRun(a.Call.Name, time.Since(began))
	b.mu.Lock()
	cancelled := r.cancelled
	b.mu.Unlock()
	switch {
	case runErr == nil && !res.Failed:
	case cancelled:
		runErr = errRunCancelled
	case b.runCtx.Err() != nil:
		// stopRuns cancelled the runs still going on past the grace.
		runErr = errRunStopped
	case ctx.Err() != nil:
		// Options.Fence stopped it.
		runErr = errRunFenced
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(b.runCtx), recordTimeout)
	defer cancel()
	a.Status, a.Note = record.StatusExecuted, clip(res.Output, maxOutputRunes)
	if runErr != nil || res.Failed {
		a.Status = record.StatusFailed
	}
	if errors.Is(runErr, errRunStopped) || errors.Is(runErr, errRunFenced) {
		a.Status = record.StatusInterrupted
	}
	if runErr != nil {
		a.Note = runErr.Error()
	}
	b.recordEnd(rctx, a, func(ctx context.Context) { b.announceEnd(ctx, a, res, runErr, extra, conv, replied) })
}

// announceEnd tells the conversations, the other instances and the LLM
// what became of a's run, once (recordEnd says when).
func (b *Broker) announceEnd(rctx context.Context, a record.Approval, res core.Result, runErr error, extra string, conv core.Conversation, replied bool) {
	notice := runNotice(a, res, runErr)
	res2 := b.resolution(a)
	for _, c := range b.targets(a.Conv, append([]core.Conversation{conv}, b.approverDirects(rctx, a)...)...) {
		text := joinLines(notice, extra)
		if replied && c.Key() == conv.Key() {
			text = notice // the acknowledgement said extra here
		}
		b.d.Resolved(rctx, c, res2)
		b.reply(rctx, core.Action{Kind: core.ActionReply, Conv: c, Text: text})
	}
	b.tellOthers(rctx, a.Token)
	b.queue(a, llmRan(a, res, runErr))
}

// stopRuns refuses new runs, lets the ones going on finish for
// Options.Grace, then cancels them and waits until they have ended and
// been recorded.
func (b *Broker) stopRuns() {
	defer b.cancelRuns() // releases the context once no run needs it
	b.mu.Lock()
	b.stopping = true
	n := b.running
	b.mu.Unlock()
	if n == 0 {
		return
	}
	b.log.Info().Int("runs", n).Dur("grace", b.o.Grace).Msg("hitl: shutting down: waiting for approved actions still running")
	done := make(chan struct{})
	go func() {
		b.runs.Wait()
		close(done)
	}()
	t := time.NewTimer(b.o.Grace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	b.log.Warn().Int("runs", n).Dur("grace", b.o.Grace).Msg("hitl: shutting down: cancelling approved actions still running")
	b.cancelRuns()
	<-done
}

// WaitIdle waits until no approved action is running and every outcome
// signal has been submitted (Run must be running for that), or until ctx
// ends. A caller that wants everything answered before it stops (e.g. at
// the end of piped input) waits for the engine, then for this,
// then for the engine again.
func (b *Broker) WaitIdle(ctx context.Context) error {
	for {
		b.mu.Lock()
		if b.running == 0 && len(b.outbox) == 0 {
			b.mu.Unlock()
			return nil
		}
		ch := b.settled
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// settleLocked wakes WaitIdle when the broker has become idle; b.mu is
// held.
func (b *Broker) settleLocked() {
	if b.running == 0 && len(b.outbox) == 0 {
		close(b.settled)
		b.settled = make(chan struct{})
	}
}
