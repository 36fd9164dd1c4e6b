package startup

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestTrace: each phase is printed as it ends with the time since the
// start and since the previous phase; Ready ends the trace with its total
// and what is marked afterwards is not printed; without a trace in the
// context marking does nothing.
func TestTrace(t *testing.T) {
	var b strings.Builder
	start := time.Unix(0, 0)
	clock := start
	tr := New(&b, start)
	tr.now = func() time.Time { return clock }
	ctx := With(context.Background(), tr)
	clock = clock.Add(1500 * time.Microsecond)
	Mark(ctx, "one")
	clock = clock.Add(250 * time.Microsecond)
	Mark(ctx, "two")
	clock = clock.Add(time.Millisecond)
	Ready(ctx, "receive")
	Mark(ctx, "after")
	Ready(ctx, "again")
	want := "startup:   1.50ms  +1.50ms  one\n" +
		"startup:   1.75ms  +0.25ms  two\n" +
		"startup:   2.75ms  +1.00ms  receive\n" +
		"startup: 2.75ms total to the first receive\n"
	if b.String() != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", b.String(), want)
	}
	Mark(context.Background(), "nothing")
	Ready(context.Background(), "nothing")
	(*Trace)(nil).Mark("nothing")
}
