package gateways

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestPacerCountsFromTheEnd: a request started with Start and ended later
// is counted in its windows from its end, so the request after the
// window's next start waits a window from it; one not ended is counted
// from its start.
func TestPacerCountsFromTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := NewPacer(Limits{Global: Limit{N: 2, Per: time.Second}})
		t0 := time.Now()
		first, err := p.Start(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Start(ctx, "b"); err != nil { // never ended: counted from its start
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		first() // answered 300 ms after it left
		first() // again: nothing
		if err := p.Wait(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d != time.Second {
			t.Errorf("the third request left at +%v; want +1s, a window after the second's start", d)
		}
		if err := p.Wait(ctx, "d"); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d != 1300*time.Millisecond {
			t.Errorf("the fourth request left at +%v; want +1.3s, a window after the first's end", d)
		}
	})
}
