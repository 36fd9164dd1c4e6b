package hitl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// blockRuns makes every run wait until the returned func is called (or its
// context ends), and reports on started when it begins.
func blockRuns(h *harness) (started chan context.Context, release func()) {
	started = make(chan context.Context, 10)
	gate := make(chan struct{})
	h.d.mu.Lock()
	h.d.running = func(ctx context.Context) {
		started <- ctx
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	h.d.mu.Unlock()
	return started, func() { close(gate) }
}

func TestApproveAnswersBeforeTheRunEnds(t *testing.T) {
	h := newHarness(t, nil)
	started, release := blockRuns(h)
	tok := h.hold(t, lsCall)
	// The approver's context ends as soon as the press is answered (a
	// webhook request, a worker's turn): the run must not depend on it.
	ctx, cancel := context.WithCancel(context.Background())
	toast := h.b.Press(ctx, boss, convB, tok, core.DecisionApprove, nil)
	cancel()
	if toast != "approved — running…" {
		t.Fatalf("toast = %q", toast)
	}
	runCtx := <-started
	// Checked while it runs: once it has ended, the broker releases the
	// run's own context.
	if runCtx.Err() != nil {
		t.Errorf("the run's context ended with the approver's: %v", runCtx.Err())
	}
	if st := h.status(t, tok); st != record.StatusExecuting {
		t.Fatalf("status %s while running, want executing", st)
	}
	h.say(boss, convB, "/approve "+tok)
	mustContain(t, "second approve", h.lastReply(t, convB).Text, "already approved (running now) by beta:boss")
	release()
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusExecuted {
		t.Errorf("status %s, want executed", st)
	}
	for _, c := range []core.Conversation{convA, convB, convDM} {
		if r := h.lastReply(t, c).Resolution; r == nil || r.Status != "executed" {
			t.Errorf("%s: resolution %+v", c, r)
		}
	}
	mustContain(t, "outcome", h.signal(t).Text, "[gatehouse]", "approved by beta:boss and ran")
}

func TestShutdownLetsRunsFinishWithinGrace(t *testing.T) {
	h := newHarness(t, func(o *hitl.Options) { o.Grace = time.Hour })
	started, release := blockRuns(h)
	tok := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok)
	runCtx := <-started
	stopped := make(chan struct{})
	go func() { h.stop(); close(stopped) }()
	// Once Run has begun to stop, new approvals are refused and stay
	// pending (they survive the restart).
	tok2 := h.hold(t, lsCall)
	testutil.WaitFor(t, "the waiting notice", func() bool { return strings.Contains(h.logs.String(), "waiting for approved actions") })
	if got := h.b.Press(context.Background(), admin, convA, tok2, core.DecisionApprove, nil); got != "not run — shutting down" {
		t.Errorf("press while stopping = %q", got)
	}
	h.say(admin, convA, "/approve "+tok2)
	mustContain(t, "approve while stopping", h.lastReply(t, convA).Text, "shutting down", "stays pending")
	if st := h.status(t, tok2); st != record.StatusPending {
		t.Errorf("refused approval: status %s, want pending", st)
	}
	select {
	case <-stopped:
		t.Fatal("Run returned while an approved action was still running within the grace period")
	default:
	}
	if runCtx.Err() != nil {
		t.Errorf("a run within the grace period was cancelled: %v", runCtx.Err())
	}
	release()
	<-stopped
	if st := h.status(t, tok); st != record.StatusExecuted {
		t.Errorf("status %s, want executed (the run was not cancelled)", st)
	}
	if got := strings.Join(h.audit(t), ","); got != "requested,approved,requested,executed" {
		t.Errorf("audit = %s", got)
	}
}

func TestShutdownCancelsRunsAfterGraceAndRecordsThem(t *testing.T) {
	h := newHarness(t, func(o *hitl.Options) { o.Grace = 1 })
	started, _ := blockRuns(h) // never released: only cancellation ends it
	tok := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok)
	<-started
	h.stop() // returns only once the cancelled run is recorded
	// Cut short like a /cancel: it may have done part of its work, so it
	// is interrupted (it said "could not be run: … context canceled" and
	// was audited failed).
	if st := h.status(t, tok); st != record.StatusInterrupted {
		t.Fatalf("status %s after shutdown, want interrupted (not stuck executing, not failed)", st)
	}
	if got := strings.Join(h.audit(t), ","); got != "requested,approved,interrupted" {
		t.Errorf("audit = %s", got)
	}
	for _, c := range []core.Conversation{convA, convB, convDM} {
		got := h.lastReply(t, c)
		if got.Resolution == nil || got.Resolution.Status != "interrupted" {
			t.Errorf("%s: resolution %+v", c, got.Resolution)
		}
		mustContain(t, "notice in "+c.Key(), got.Text, "stopped by shutdown while it ran; it may have done part of its work")
		if strings.Contains(got.Text, "could not be run") || strings.Contains(got.Text, "canceled") {
			t.Errorf("notice in %s reports the shutdown as an error: %q", c.Key(), got.Text)
		}
	}
	mustContain(t, "log", h.logs.String(), "cancelling approved actions still running")
}
