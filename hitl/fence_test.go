package hitl_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// sharedMem is a hitl.Store made a SharedStore, as PostgreSQL is: the
// tests play the other instance by finishing approvals on it directly.
type sharedMem struct{ hitl.Store }

func (s sharedMem) ClaimApprovalOn(ctx context.Context, _, token string, to record.Status, by core.Identity, note string, now time.Time) (record.Approval, error) {
	return s.ClaimApproval(ctx, token, to, by, note, now)
}

func (s sharedMem) InterruptRuns(context.Context, string, bool, time.Duration, string, time.Time) ([]record.Approval, error) {
	return nil, nil
}

// shared makes the harness's store (whatever wraps it) shared and names
// the instance.
func shared(o *hitl.Options) {
	switch s := o.Store.(type) {
	case *hitl.MemoryStore:
		o.Audit = s
	case *flakyFinish:
		o.Audit = s.MemoryStore
	}
	o.Store = sharedMem{o.Store}
	o.Instance = "a"
}

// tripFence is a hitl.Fence the test trips.
type tripFence struct {
	mu      sync.Mutex
	cancels []context.CancelFunc
}

func (f *tripFence) Guard(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	f.mu.Lock()
	f.cancels = append(f.cancels, cancel)
	f.mu.Unlock()
	return ctx, cancel
}

func (f *tripFence) trip() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.cancels {
		c()
	}
}

// TestRunInterruptedElsewhereIsNotAnnouncedRan: while this instance's run
// goes on, another instance marks it interrupted (it took this one for
// dead); when the run ends here, its end is not recorded, audited,
// announced or reported to the LLM: the approval keeps the one outcome
// the other instance announced.
func TestRunInterruptedElsewhereIsNotAnnouncedRan(t *testing.T) {
	h := newHarness(t, shared)
	started, release := blockRuns(h)
	tok := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok)
	<-started
	// The other instance's InterruptRuns.
	if err := h.store.FinishApproval(context.Background(), tok, record.StatusInterrupted, "taken for dead", h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	before := len(h.alpha.in(convA))
	release()
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusInterrupted {
		t.Errorf("status %s; want interrupted (the first outcome recorded)", st)
	}
	if got := strings.Join(h.audit(t), ","); got != "requested,approved" {
		t.Errorf("audit = %s; want no outcome from this instance (the other one audits interrupted)", got)
	}
	for _, s := range h.alpha.in(convA)[before:] {
		if strings.Contains(s.Text, " ran") {
			t.Errorf("announced in %s: %q", convA.Key(), s.Text)
		}
	}
	h.noSignal(t)
}

// TestFencedRunIsRecordedInterruptedOnce: a run the fence stops (this
// instance could not renew its heartbeat) ends as interrupted, recorded,
// audited and announced once, saying why.
func TestFencedRunIsRecordedInterruptedOnce(t *testing.T) {
	f := &tripFence{}
	h := newHarness(t, func(o *hitl.Options) {
		shared(o)
		o.Fence = f
	})
	started, _ := blockRuns(h) // never released: only the fence ends it
	tok := h.hold(t, lsCall)
	h.say(boss, convB, "/approve "+tok)
	<-started
	f.trip()
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusInterrupted {
		t.Fatalf("status %s after the fence tripped; want interrupted", st)
	}
	if got := strings.Join(h.audit(t), ","); got != "requested,approved,interrupted" {
		t.Errorf("audit = %s", got)
	}
	got := h.lastReply(t, convA)
	mustContain(t, "notice", got.Text, "lost the database", "not run again")
	mustContain(t, "outcome for the LLM", h.signal(t).Text, "lost its database", "not run again")
}

// TestSharedFinishRetriedUntilRecorded: on a shared store, a run whose end
// cannot be recorded at once (the database unreachable) is announced only
// once it is recorded, not before: announced but still executing, it
// would be announced again, interrupted, by another instance.
func TestSharedFinishRetriedUntilRecorded(t *testing.T) {
	var fs *flakyFinish
	h := newHarness(t, func(o *hitl.Options) {
		withFlakyFinish(&fs)(o)
		shared(o)
	})
	tok := h.hold(t, lsCall)
	fs.fail.Store(3)
	h.say(boss, convB, "/approve "+tok)
	h.idle(t)
	if st := h.status(t, tok); st != record.StatusExecuted {
		t.Fatalf("status %s; want executed (recorded after the store came back)", st)
	}
	if n := fs.calls.Load(); n != 4 {
		t.Errorf("FinishApproval called %d times; want 4 (three failures, then recorded)", n)
	}
	if got := strings.Join(h.audit(t), ","); got != "requested,approved,executed" {
		t.Errorf("audit = %s", got)
	}
	mustContain(t, "notice", h.lastReply(t, convA).Text, " ran.")
}
