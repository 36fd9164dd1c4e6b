package testutil

import (
	"fmt"
	"testing"
	"time"
)

// errorRecorder is a testing.TB that records Errorf instead of failing.
type errorRecorder struct {
	testing.TB
	errs []string
}

func (r *errorRecorder) Helper() {}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheckSpacing: deliveries of one message closer than the least gap
// are reported, other messages' are not, and the edits are counted.
func TestCheckSpacing(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ds := []Delivery{
		{"a", t0},
		{"b", t0.Add(100 * time.Millisecond)}, // another message: no gap to keep
		{"a", t0.Add(time.Second)},            // exactly the least gap: fine
		{"a", t0.Add(1500 * time.Millisecond)},
		{"b", t0.Add(1200 * time.Millisecond)},
	}
	r := &errorRecorder{TB: t}
	if edits := CheckSpacing(r, ds, time.Second); edits != 3 {
		t.Errorf("edits = %d; want 3", edits)
	}
	if len(r.errs) != 1 {
		t.Fatalf("errors %q; want one, for a's third delivery 500ms after its second", r.errs)
	}
}
