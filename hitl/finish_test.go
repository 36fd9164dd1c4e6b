package hitl_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// flakyFinish is a MemoryStore whose next fail FinishApproval calls fail
// with a store error (as a locked or unreachable database would), whose
// next lost ones record the end but fail all the same (the answer lost
// with a connection), and whose next failAudit AppendAudit calls fail.
type flakyFinish struct {
	*hitl.MemoryStore
	fail      atomic.Int32
	lost      atomic.Int32
	failAudit atomic.Int32
	calls     atomic.Int32
}

func (f *flakyFinish) FinishApproval(ctx context.Context, token string, to record.Status, note string, now time.Time) error {
	f.calls.Add(1)
	if f.fail.Add(-1) >= 0 {
		return errors.New("database is locked")
	}
	if f.lost.Add(-1) >= 0 {
		if err := f.MemoryStore.FinishApproval(ctx, token, to, note, now); err != nil {
			return err
		}
		return errors.New("connection reset by peer")
	}
	return f.MemoryStore.FinishApproval(ctx, token, to, note, now)
}

func (f *flakyFinish) AppendAudit(ctx context.Context, e record.AuditEntry) error {
	if f.failAudit.Add(-1) >= 0 {
		return errors.New("database is locked")
	}
	return f.MemoryStore.AppendAudit(ctx, e)
}

// withFlakyFinish wraps the harness's store; the returned store fails its
// next n FinishApproval calls once armed.
func withFlakyFinish(fs **flakyFinish) func(*hitl.Options) {
	return func(o *hitl.Options) {
		*fs = &flakyFinish{MemoryStore: o.Store.(*hitl.MemoryStore)}
		o.Store = *fs
	}
}

// TestExpiryRetriesAFailedFinish: a sweep whose FinishApproval fails logs
// it at error and counts it, and the approval stays pending and due: the
// next sweep expires it, announcing it once.
func TestExpiryRetriesAFailedFinish(t *testing.T) {
	var fs *flakyFinish
	h := newHarness(t, withFlakyFinish(&fs))
	tok := h.hold(t, lsCall)
	h.clock.Advance(ttl)
	fs.fail.Store(1)
	if n, err := h.b.ExpireDue(context.Background()); n != 0 || err != nil {
		t.Fatalf("ExpireDue with a failing store = %d, %v; want 0, nil", n, err)
	}
	if st := h.status(t, tok); st != record.StatusPending {
		t.Fatalf("status after the failed finish = %s; want pending (still due)", st)
	}
	if got := h.b.Stats().FinishFailures; got != 1 {
		t.Fatalf("FinishFailures = %d; want 1", got)
	}
	logs := h.logs.String()
	mustContain(t, "logs", logs, `"level":"error"`, "database is locked", "could not expire")
	if strings.Contains(logs, tok) {
		t.Errorf("the logs name the token:\n%s", logs)
	}
	if n, err := h.b.ExpireDue(context.Background()); n != 1 || err != nil {
		t.Fatalf("next ExpireDue = %d, %v; want 1, nil", n, err)
	}
	checkExpiredAnnounced(t, h, tok)
	if got := h.b.Stats().FinishFailures; got != 1 {
		t.Errorf("FinishFailures after the retry = %d; want still 1", got)
	}
}

// TestRecoverRetriesAFailedFinishOnTheNextSweep: an approval left executing
// whose interruption cannot be recorded at start-up is logged, counted and
// recorded by Run's next sweep, then audited, announced and reported once.
func TestRecoverRetriesAFailedFinishOnTheNextSweep(t *testing.T) {
	var fs *flakyFinish
	h := newHarness(t, func(o *hitl.Options) {
		withFlakyFinish(&fs)(o)
		o.SweepEvery = 10 * time.Millisecond
	})
	tok := h.hold(t, lsCall)
	if _, err := h.store.ClaimApproval(context.Background(), tok, record.StatusExecuting, boss, "", t0); err != nil {
		t.Fatal(err)
	}
	fs.fail.Store(1)
	if n, err := h.b.Recover(context.Background()); n != 0 || err != nil {
		t.Fatalf("Recover with a failing store = %d, %v; want 0, nil", n, err)
	}
	if got := h.b.Stats().FinishFailures; got != 1 {
		t.Fatalf("FinishFailures = %d; want 1", got)
	}
	testutil.WaitFor(t, "the next sweep to mark the approval interrupted", func() bool {
		return h.status(t, tok) == record.StatusInterrupted
	})
	mustContain(t, "outcome", h.signal(t).Text, "bot stopped", "not run again")
	mustContain(t, "notice", h.lastReply(t, convA).Text, "Interrupted")
	mustContain(t, "logs", h.logs.String(), `"level":"error"`, "database is locked", "could not mark interrupted")
	if got := h.b.Stats().FinishFailures; got != 1 {
		t.Errorf("FinishFailures after the retry = %d; want 1", got)
	}
	if n := h.b.RetryInterrupted(context.Background()); n != 0 {
		t.Errorf("RetryInterrupted after the sweep recorded %d again", n)
	}
	if got := h.audit(t); got[len(got)-1] != "interrupted" || strings.Count(strings.Join(got, " "), "interrupted") != 1 {
		t.Errorf("audit = %v; want one interrupted entry, last", got)
	}
	h.noSignal(t)
	if d := h.d.runs.Load(); d != 0 {
		t.Errorf("the interrupted action ran %d times", d)
	}
}

// TestRunRetriesAFailedEnd: the end of an approved run whose writes fail
// for a while (the end state twice, the audit row twice) is tried again
// until it is recorded: the approval ends executed, never left executing
// for a restart to call interrupted, with one executed audit row.
func TestRunRetriesAFailedEnd(t *testing.T) {
	var fs *flakyFinish
	h := newHarness(t, withFlakyFinish(&fs))
	tok := h.hold(t, lsCall)
	fs.fail.Store(2)
	fs.failAudit.Store(2)
	h.say(boss, convB, "/approve "+tok)
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusExecuted {
		t.Fatalf("status after two failed writes of the end = %s; want executed", st)
	}
	if got := strings.Join(h.audit(t), " "); strings.Count(got, "executed") != 1 {
		t.Errorf("audit = %s; want one executed entry", got)
	}
	mustContain(t, "outcome", h.signal(t).Text, "approved by beta:boss and ran")
	if got := h.b.Stats().FinishFailures; got != 2 {
		t.Errorf("FinishFailures = %d; want 2", got)
	}
	if logs := h.logs.String(); strings.Contains(logs, "settled otherwise") || strings.Contains(logs, tok) {
		t.Errorf("logs:\n%s", logs)
	}
}

// TestRunEndLostAnswerIsRecorded: an end state recorded whose answer was
// lost (the connection cut after the commit) is found recorded by the
// next try, not reported as settled by someone else.
func TestRunEndLostAnswerIsRecorded(t *testing.T) {
	var fs *flakyFinish
	h := newHarness(t, withFlakyFinish(&fs))
	tok := h.hold(t, lsCall)
	fs.lost.Store(1)
	h.say(boss, convB, "/approve "+tok)
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusExecuted {
		t.Fatalf("status = %s; want executed", st)
	}
	if logs := h.logs.String(); strings.Contains(logs, "settled otherwise") {
		t.Errorf("a lost answer was taken for another's settlement:\n%s", logs)
	}
}

// TestRunEndLeftToTheSweeps: an end whose writes still fail after the
// tries at once is recorded by a later sweep, while the run's outcome
// was reported once.
func TestRunEndLeftToTheSweeps(t *testing.T) {
	var fs *flakyFinish
	h := newHarness(t, func(o *hitl.Options) {
		withFlakyFinish(&fs)(o)
		o.SweepEvery = 10 * time.Millisecond
	})
	tok := h.hold(t, lsCall)
	fs.fail.Store(8) // more than the tries at once (5)
	h.say(boss, convB, "/approve "+tok)
	mustContain(t, "outcome", h.signal(t).Text, "approved by beta:boss and ran")
	// The log line follows the state and the audit row: wait for all three.
	testutil.WaitFor(t, "a sweep to record the end of the run", func() bool {
		return h.status(t, tok) == record.StatusExecuted && strings.Contains(h.logs.String(), "the end of a run is recorded")
	})
	mustContain(t, "logs", h.logs.String(), "trying again on every sweep", "the end of a run is recorded")
	if got := strings.Join(h.audit(t), " "); strings.Count(got, "executed") != 1 || strings.Contains(got, "interrupted") {
		t.Errorf("audit = %s; want one executed entry and no interruption", got)
	}
	h.noSignal(t)
}
