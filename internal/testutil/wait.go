package testutil

import (
	"testing"
	"time"
)

// HangGuard bounds every wait in the tests. It is a guard against a hang,
// not a timing assertion: a condition that holds at all holds far sooner,
// and a loaded CI machine must never fail a test that is merely slow.
const HangGuard = 30 * time.Second

// WaitFor polls cond until it holds and fails the test, naming what it was
// waiting for, if it has not held within HangGuard. It waits for another
// goroutine's or process's progress; it never measures time.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	waitFor(tb, what, cond, HangGuard)
}

func waitFor(tb testing.TB, what string, cond func() bool, guard time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(guard)
	for pause := 100 * time.Microsecond; !cond(); pause = min(2*pause, 10*time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", guard, what)
		}
		time.Sleep(pause)
	}
}
