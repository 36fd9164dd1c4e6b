package testutil

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	WaitFor(t, "the third call", func() bool { return calls.Add(1) == 3 })
	if got := calls.Load(); got != 3 {
		t.Fatalf("cond called %d times; want exactly 3 (WaitFor returns as soon as it holds)", got)
	}
}

// recorder is a testing.TB that records Fatalf instead of ending the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	panic(r) // Fatalf must not return; unwind to the test below
}

func TestWaitForFailsNamingWhat(t *testing.T) {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != r {
				t.Fatalf("WaitFor did not fail the test: recovered %v", p)
			}
		}()
		waitFor(r, "never", func() bool { return false }, time.Millisecond)
	}()
	if r.failed == "" {
		t.Fatal("WaitFor did not call Fatalf")
	}
}
