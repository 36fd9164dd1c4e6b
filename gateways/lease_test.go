package gateways_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
)

// runLog records which holder runs when; it fails the test if two run at
// once.
type runLog struct {
	t       *testing.T
	mu      sync.Mutex
	running string
	starts  []string
	stops   []time.Time
}

func (r *runLog) run(holder string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		r.mu.Lock()
		if r.running != "" {
			r.t.Errorf("%s runs while %s does", holder, r.running)
		}
		r.running = holder
		r.starts = append(r.starts, holder)
		r.mu.Unlock()
		<-ctx.Done()
		r.mu.Lock()
		r.running = ""
		r.stops = append(r.stops, time.Now())
		r.mu.Unlock()
		return ctx.Err()
	}
}

func (r *runLog) state() (string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running, append([]string(nil), r.starts...)
}

const testTTL = 15 * time.Second

// start runs RunUnderLease for holder until the returned cancel.
func startUnderLease(l gateways.Leaser, holder string, run func(context.Context) error) (context.CancelFunc, chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gateways.RunUnderLease(ctx, l, "telegram:1", holder, testTTL, zerolog.Nop(), run) }()
	return cancel, done
}

// TestRunUnderLeaseOneAtATime: of two instances, one runs; while it holds
// the lease (renewed well past ttl) the other waits; when the first stops,
// it releases the lease and the other takes over within ttl/3, not ttl.
func TestRunUnderLeaseOneAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := gatewaytest.NewLeases()
		runs := &runLog{t: t}
		stopA, doneA := startUnderLease(l, "a", runs.run("a"))
		synctest.Wait()
		stopB, doneB := startUnderLease(l, "b", runs.run("b"))
		defer func() { stopB(); <-doneB }()
		time.Sleep(5 * testTTL) // renewed every ttl/3 all along
		synctest.Wait()
		if running, starts := runs.state(); running != "a" || len(starts) != 1 {
			t.Fatalf("after 5 ttl: running %q, starts %v; want a alone", running, starts)
		}
		t0 := time.Now()
		stopA()
		if err := <-doneA; err != nil {
			t.Fatalf("RunUnderLease(a) after its context ended = %v, want nil", err)
		}
		if h, _ := l.Holder("telegram:1"); h != "" {
			t.Fatalf("after a stopped, the lease is held by %q; want it released", h)
		}
		time.Sleep(testTTL / 3)
		synctest.Wait()
		if running, starts := runs.state(); running != "b" || len(starts) != 2 {
			t.Fatalf("ttl/3 after a released: running %q, starts %v; want b", running, starts)
		}
		if d := time.Since(t0); d > testTTL/3 {
			t.Fatalf("b took over %v after the release, want within ttl/3", d)
		}
	})
}

// TestRunUnderLeaseStopsWhenTheLeaseIsLost: a renewal that finds the lease
// held by another stops run at once and goes back to waiting; the holder
// takes it again once the other releases it.
func TestRunUnderLeaseStopsWhenTheLeaseIsLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := gatewaytest.NewLeases()
		runs := &runLog{t: t}
		stop, done := startUnderLease(l, "a", runs.run("a"))
		defer func() { stop(); <-done }()
		synctest.Wait()
		l.Steal("telegram:1", "x", testTTL)
		time.Sleep(testTTL / 3) // the next renewal
		synctest.Wait()
		if running, _ := runs.state(); running != "" {
			t.Fatalf("after the lease was taken by x, %q still runs", running)
		}
		time.Sleep(testTTL / 3) // a's retries see x hold it
		synctest.Wait()
		if running, starts := runs.state(); running != "" || len(starts) != 1 {
			t.Fatalf("while x holds the lease: running %q, starts %v", running, starts)
		}
		if err := l.ReleaseLease(context.Background(), "telegram:1", "x"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(testTTL / 3)
		synctest.Wait()
		if running, starts := runs.state(); running != "a" || len(starts) != 2 {
			t.Fatalf("after x released: running %q, starts %v; want a again", running, starts)
		}
	})
}

// TestRunUnderLeaseStopsBeforeTheLeaseExpires: with the store unreachable,
// renewals fail; run is stopped before the lease expires (so that another
// instance taking it over never runs beside it), and it starts again when
// the store is back.
func TestRunUnderLeaseStopsBeforeTheLeaseExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := gatewaytest.NewLeases()
		runs := &runLog{t: t}
		stop, done := startUnderLease(l, "a", runs.run("a"))
		defer func() { stop(); <-done }()
		time.Sleep(testTTL) // a few renewals
		synctest.Wait()
		_, expires := l.Holder("telegram:1")
		l.SetFail(true)
		time.Sleep(testTTL)
		synctest.Wait()
		running, _ := runs.state()
		runs.mu.Lock()
		stops := append([]time.Time(nil), runs.stops...)
		runs.mu.Unlock()
		if running != "" || len(stops) != 1 {
			t.Fatalf("store down for ttl: running %q, %d stops; want run stopped", running, len(stops))
		}
		if !stops[0].Before(expires) {
			t.Fatalf("run stopped at %v, not before the lease expired at %v", stops[0], expires)
		}
		l.SetFail(false)
		time.Sleep(testTTL / 3)
		synctest.Wait()
		if running, starts := runs.state(); running != "a" || len(starts) != 2 {
			t.Fatalf("store back: running %q, starts %v; want a again", running, starts)
		}
	})
}

// TestRunUnderLeaseReturnsRunsError: run ending by itself ends
// RunUnderLease with its error, and the lease is released.
func TestRunUnderLeaseReturnsRunsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := gatewaytest.NewLeases()
		boom := errors.New("boom")
		_, done := startUnderLease(l, "a", func(context.Context) error { return boom })
		if err := <-done; !errors.Is(err, boom) {
			t.Fatalf("RunUnderLease = %v, want run's error", err)
		}
		if h, _ := l.Holder("telegram:1"); h != "" {
			t.Fatalf("lease held by %q after run returned; want it released", h)
		}
		if err := gateways.RunUnderLease(context.Background(), l, "x", "a", 0, zerolog.Nop(), nil); err == nil {
			t.Fatal("ttl 0: no error")
		}
	})
}
