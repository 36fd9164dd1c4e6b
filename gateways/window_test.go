package gateways

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// maxInWindow returns the most of times (sorted) that fall in one window
// [t, t+per): the busiest window starts at one of the times.
func maxInWindow(times []time.Time, per time.Duration) int {
	most := 0
	for i, t := range times {
		n := 0
		for _, u := range times[i:] {
			if u.Before(t.Add(per)) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// A burst of 200 sends to 10 chats: no window of the limit's length holds
// more than the limit, globally or in any chat, and the first window is
// used fully (a token bucket that starts full lets 2N through in it).
func TestPacerWindowNeverOverLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits Limits
	}{
		{"global binds", Limits{Global: Limit{N: 30, Per: time.Second}, PerChat: Limit{N: 5, Per: time.Second}}},
		{"per chat binds (Telegram)", Limits{Global: Limit{N: 30, Per: time.Second}, PerChat: Limit{N: 1, Per: time.Second}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := NewPacer(tc.limits)
				start := time.Now()
				var mu sync.Mutex
				all := []time.Time{}
				perChat := map[string][]time.Time{}
				var wg sync.WaitGroup
				for c := range 10 {
					chat := fmt.Sprint("chat", c)
					wg.Go(func() {
						for range 20 {
							if err := p.Wait(context.Background(), chat); err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							all = append(all, time.Now())
							perChat[chat] = append(perChat[chat], time.Now())
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				slices.SortFunc(all, time.Time.Compare)
				if len(all) != 200 {
					t.Fatalf("%d sends went through, want 200", len(all))
				}
				if n := maxInWindow(all, time.Second); n > tc.limits.Global.N {
					t.Errorf("%d sends in one second overall, limit %d", n, tc.limits.Global.N)
				}
				for chat, times := range perChat {
					if n := maxInWindow(times, time.Second); n > tc.limits.PerChat.N {
						t.Errorf("%s: %d sends in one second, limit %d", chat, n, tc.limits.PerChat.N)
					}
				}
				want := min(tc.limits.Global.N, 10*tc.limits.PerChat.N)
				first := 0
				for _, at := range all {
					if at.Before(start.Add(time.Second)) {
						first++
					}
				}
				if first != want {
					t.Errorf("%d sends in the first second, want %d", first, want)
				}
			})
		})
	}
}

func TestPacerPauseHoldsOnlyItsChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPacer(Limits{})
		start := time.Now()
		p.Pause("slow", 3*time.Second)
		if err := p.Wait(context.Background(), "fast"); err != nil || time.Since(start) != 0 {
			t.Fatalf("unpaused chat waited %v (%v)", time.Since(start), err)
		}
		if err := p.Wait(context.Background(), "slow"); err != nil || time.Since(start) != 3*time.Second {
			t.Fatalf("paused chat went after %v, want 3s (%v)", time.Since(start), err)
		}
	})
}

// TestPacerPausedSaysWhileAPauseHolds: Paused is true for a paused chat
// until its pause ends, for every chat during a global pause, and never
// for a chat only its rate limit delays.
func TestPacerPausedSaysWhileAPauseHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPacer(Limits{PerChat: Limit{N: 1, Per: time.Hour}})
		_ = p.Wait(context.Background(), "busy")
		p.Pause("slow", 2*time.Second)
		if p.Paused("busy") || p.Paused("other") || !p.Paused("slow") {
			t.Fatalf("Paused busy/other/slow = %v/%v/%v; want false/false/true", p.Paused("busy"), p.Paused("other"), p.Paused("slow"))
		}
		time.Sleep(2 * time.Second)
		if p.Paused("slow") {
			t.Fatal("still paused once the pause is over")
		}
		p.PauseAll(time.Second)
		if !p.Paused("other") {
			t.Fatal("a global pause does not hold other")
		}
		time.Sleep(time.Second)
		if p.Paused("other") {
			t.Fatal("still paused once the global pause is over")
		}
	})
}

func TestPacerPauseAllHoldsEveryChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPacer(Limits{})
		start := time.Now()
		p.PauseAll(2 * time.Second)
		p.Pause("a", time.Second) // shorter: the global pause still holds
		for _, chat := range []string{"a", "b"} {
			if err := p.Wait(context.Background(), chat); err != nil || time.Since(start) != 2*time.Second {
				t.Fatalf("%s went after %v, want 2s (%v)", chat, time.Since(start), err)
			}
		}
	})
}

func TestPacerWaitEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPacer(Limits{PerChat: Limit{N: 1, Per: time.Hour}})
		if err := p.Wait(context.Background(), "c"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Wait(ctx, "c"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("second send within the hour: %v", err)
		}
		if err := p.Wait(context.Background(), "other"); err != nil {
			t.Fatalf("another chat has its own window: %v", err)
		}
	})
}

func TestPacerForgetsIdleChats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPacer(Limits{PerChat: Limit{N: 1, Per: time.Second}})
		for i := range maxIdleChats + 10 {
			if err := p.Wait(context.Background(), fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
			if i == maxIdleChats/2 {
				time.Sleep(time.Second) // the first half is now idle
			}
		}
		p.mu.Lock()
		n := len(p.chats)
		p.mu.Unlock()
		if n > maxIdleChats {
			t.Fatalf("%d chat windows kept", n)
		}
		// A forgotten chat was idle: it may send again at once.
		start := time.Now()
		if err := p.Wait(context.Background(), "0"); err != nil || time.Since(start) != 0 {
			t.Fatalf("idle chat waited %v (%v)", time.Since(start), err)
		}
	})
}
