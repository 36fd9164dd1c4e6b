package cluster

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
)

// TestFenceTripsBeforeTheLeaseCanExpire: a guarded call goes on while the
// renewals succeed, ends with ErrFenced once the last successful renewal
// began half the lease ago, and new calls are refused until a renewal
// succeeds again.
func TestFenceTripsBeforeTheLeaseCanExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 6 * time.Second
		f := NewFence(ttl/2, zerolog.Nop())
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		go f.Run(ctx)
		f.Renewed("heartbeat", time.Now())
		call, release := f.Guard(ctx)
		defer release()
		for range 5 { // renewed every ttl/3: the call goes on
			time.Sleep(ttl / 3)
			f.Renewed("heartbeat", time.Now())
			synctest.Wait()
			if call.Err() != nil {
				t.Fatalf("call stopped while the renewals succeed: %v", context.Cause(call))
			}
		}
		start := time.Now()
		time.Sleep(ttl/2 - time.Millisecond) // the renewals fail from here
		synctest.Wait()
		if call.Err() != nil {
			t.Fatalf("call stopped before half the lease: %v", context.Cause(call))
		}
		<-call.Done()
		if took := time.Since(start); took != ttl/2 {
			t.Errorf("stopped %v after the last renewal began; want %v", took, ttl/2)
		}
		if !errors.Is(context.Cause(call), ErrFenced) {
			t.Errorf("cause = %v; want ErrFenced", context.Cause(call))
		}
		late, release2 := f.Guard(ctx)
		defer release2()
		if !errors.Is(context.Cause(late), ErrFenced) {
			t.Fatalf("a call begun while fenced runs (cause %v)", context.Cause(late))
		}
		f.Renewed("heartbeat", time.Now())
		again, release3 := f.Guard(ctx)
		defer release3()
		if again.Err() != nil {
			t.Fatalf("a call after a renewal is refused: %v", context.Cause(again))
		}
	})
}

// TestFenceTripsOnAGapSeenOnlyByTheRenewal: a renewal that succeeds after
// a gap longer than the limit (a paused process resumed, its watch not
// yet run) stops the calls guarded before the gap.
func TestFenceTripsOnAGapSeenOnlyByTheRenewal(t *testing.T) {
	f := NewFence(3*time.Second, zerolog.Nop()) // no Run: the renewal alone
	t0 := time.Now()
	f.Renewed("heartbeat", t0)
	call, release := f.Guard(context.Background())
	defer release()
	if call.Err() != nil {
		t.Fatalf("call refused with fresh renewals: %v", context.Cause(call))
	}
	f.Renewed("heartbeat", t0.Add(20*time.Second))
	if !errors.Is(context.Cause(call), ErrFenced) {
		t.Fatalf("cause after a 20 s gap = %v; want ErrFenced", context.Cause(call))
	}
}

// TestFenceLeaseReleasedNoLongerCounts: a lease let go does not trip the
// fence however old its last renewal.
func TestFenceLeaseReleasedNoLongerCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewFence(time.Second, zerolog.Nop())
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		go f.Run(ctx)
		f.Renewed("lease", time.Now())
		f.Released("lease")
		call, release := f.Guard(ctx)
		defer release()
		time.Sleep(time.Minute)
		synctest.Wait()
		if call.Err() != nil {
			t.Fatalf("call stopped by a released lease: %v", context.Cause(call))
		}
	})
}

// TestNilFenceGuardsNothing: one process on its own store.
func TestNilFenceGuardsNothing(t *testing.T) {
	var f *Fence
	f.Renewed("heartbeat", time.Time{})
	f.Released("heartbeat")
	ctx, release := f.Guard(context.Background())
	defer release()
	if ctx.Err() != nil {
		t.Fatal("a nil fence ended the context")
	}
	if err := f.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}
