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
// with a store error (as a locked or unreachable database would).
type flakyFinish struct {
	*hitl.MemoryStore
	fail  atomic.Int32
	calls atomic.Int32
}

func (f *flakyFinish) FinishApproval(ctx context.Context, token string, to record.Status, note string, now time.Time) error {
	f.calls.Add(1)
	if f.fail.Add(-1) >= 0 {
		return errors.New("database is locked")
	}
	return f.MemoryStore.FinishApproval(ctx, token, to, note, now)
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
