package main

import (
	"runtime"
	"testing"
)

// TestOneProcUnlessSet: the bot runs its Go code on one thread unless
// GOMAXPROCS is set, which is then left to the runtime.
func TestOneProcUnlessSet(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	if got := limitProcs(func(string) string { return "3" }); got != 0 {
		t.Fatalf("with GOMAXPROCS=3 set: limitProcs = %d; want 0 (untouched)", got)
	}
	if got := limitProcs(func(string) string { return "" }); got != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Fatalf("without GOMAXPROCS: limitProcs = %d, GOMAXPROCS %d; want 1", got, runtime.GOMAXPROCS(0))
	}
}
