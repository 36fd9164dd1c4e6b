package telegram

import "testing"

// TestOffsetsUnstart: an update taken back (the store did not answer) is
// not confirmed, is handed over again by the next poll, and is confirmed
// once done; an update in progress before it is unaffected.
func TestOffsetsUnstart(t *testing.T) {
	o := newOffsets(100, nil)
	o.start(100)
	o.start(101)
	o.unstart(101)
	if base, _ := o.next(); base != 100 {
		t.Fatalf("offset %d after 101 was taken back with 100 in progress; want 100", base)
	}
	if o.seen(101) {
		t.Fatal("101 counts as seen after it was taken back: it would never be handed over again")
	}
	o.finish(100)
	if base, _ := o.next(); base != 101 {
		t.Fatalf("offset %d with 100 done and 101 taken back; want 101 (101 not confirmed)", base)
	}
	o.start(101)
	o.finish(101)
	if base, _ := o.next(); base != 102 {
		t.Fatalf("offset %d with 101 done; want 102", base)
	}
	o.unstart(101) // done already: nothing to take back
	if base, _ := o.next(); base != 102 {
		t.Fatalf("offset %d after taking back a done update; want 102", base)
	}
}
