package gateways

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestPacerBurstThenRate(t *testing.T) {
	p := NewPacer(PacerConfig{PerChat: Rate{Every: time.Hour, Burst: 3}})
	ctx := context.Background()
	for i := range 3 {
		if err := p.Wait(ctx, "c"); err != nil {
			t.Fatalf("send %d within the burst: %v", i, err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := p.Wait(short, "c"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fourth send must wait for the bucket, got %v", err)
	}
	if err := p.Wait(ctx, "other"); err != nil {
		t.Fatalf("another chat has its own bucket: %v", err)
	}
}

func TestPacerGlobalLimitAppliesAcrossChats(t *testing.T) {
	p := NewPacer(PacerConfig{Global: Rate{Every: time.Hour, Burst: 2}})
	ctx := context.Background()
	for _, chat := range []string{"a", "b"} {
		if err := p.Wait(ctx, chat); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := p.Wait(short, "c"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("global bucket is empty, got %v", err)
	}
}

func TestPacerPauseHoldsOnlyItsChat(t *testing.T) {
	p := NewPacer(PacerConfig{})
	ctx := context.Background()
	p.Pause("slow", time.Hour)
	if err := p.Wait(ctx, "fast"); err != nil {
		t.Fatalf("unpaused chat: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := p.Wait(short, "slow"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("paused chat must wait, got %v", err)
	}
}

func TestPacerPauseEndsAndSendsResume(t *testing.T) {
	p := NewPacer(PacerConfig{PerChat: Rate{Every: time.Millisecond, Burst: 1}})
	p.Pause("c", 30*time.Millisecond)
	start := time.Now()
	if err := p.Wait(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("Wait returned before the pause ended")
	}
}

// Many concurrent senders on fast rates: every send goes through, none is
// dropped, and each sender's own sends keep their order.
func TestPacerNeverDrops(t *testing.T) {
	p := NewPacer(PacerConfig{
		PerChat: Rate{Every: time.Millisecond, Burst: 2},
		Global:  Rate{Every: 200 * time.Microsecond, Burst: 5},
	})
	var mu sync.Mutex
	got := map[string][]int{}
	var wg sync.WaitGroup
	for c := range 8 {
		chat := fmt.Sprint("chat", c)
		wg.Go(func() {
			for i := range 20 {
				if err := p.Wait(context.Background(), chat); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got[chat] = append(got[chat], i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for chat, seq := range got {
		for i, v := range seq {
			if v != i {
				t.Fatalf("%s out of order: %v", chat, seq)
			}
		}
		if len(seq) != 20 {
			t.Fatalf("%s: %d sends, want 20", chat, len(seq))
		}
	}
}

func TestPacerForgetsIdleChats(t *testing.T) {
	p := NewPacer(PacerConfig{PerChat: Rate{Every: time.Nanosecond, Burst: 1}})
	for i := range maxIdleBuckets + 10 {
		if err := p.Wait(context.Background(), fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	p.mu.Lock()
	n := len(p.chats)
	p.mu.Unlock()
	if n > maxIdleBuckets {
		t.Fatalf("%d buckets kept", n)
	}
}
