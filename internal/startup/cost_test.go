package startup

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTraceWithCosts: with costs, a first line says what came before main
// (faults as of Begin), each phase adds its faults and heap bytes, and a
// last line sums them since main and in all.
func TestTraceWithCosts(t *testing.T) {
	var b strings.Builder
	start := time.Now()
	tr := New(&b, start)
	tr.now = func() time.Time { return start }
	c := Cost{Faults: 700, Allocs: 400 << 10}
	atMain = 600
	t.Cleanup(func() { atMain = -1 })
	tr.withCosts(func() Cost { return c })
	ctx := With(context.Background(), tr)
	c = Cost{Faults: 730, Allocs: 410 << 10}
	Mark(ctx, "one")
	c = Cost{Faults: 750, Allocs: 411 << 10}
	Ready(ctx, "receive")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		`^startup: before main: (≈-?[0-9.]+ms|\?) of the main thread since exec, 600 faults, 400\.0 KiB allocated`,
		`^startup: +0\.00ms +\+0\.00ms  one  \[\+130 faults, \+10\.0 KiB\]$`,
		`^startup: +0\.00ms +\+0\.00ms  receive  \[\+20 faults, \+1\.0 KiB\]$`,
		`^startup: 0\.00ms total to the first receive$`,
		`^startup: 150 faults and 11\.0 KiB allocated since main; 750 faults and 411\.0 KiB in all$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("trace:\n%s", b.String())
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Fatalf("line %d %q does not match %s", i, lines[i], w)
		}
	}
}

// TestBeginCountsFaults: Begin records the faults so far (on Linux, some
// are always taken before main).
func TestBeginCountsFaults(t *testing.T) {
	t.Cleanup(func() { atMain = -1 })
	Begin()
	if atMain < 0 {
		t.Fatalf("atMain %d after Begin", atMain)
	}
}
