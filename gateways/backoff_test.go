package gateways

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBackoffNextStaysInItsWindow(t *testing.T) {
	b := Backoff{Min: 10 * time.Millisecond, Max: 80 * time.Millisecond}
	for _, tc := range []struct {
		attempt int
		ceil    time.Duration
	}{
		{-1, 10 * time.Millisecond},
		{0, 10 * time.Millisecond},
		{1, 20 * time.Millisecond},
		{2, 40 * time.Millisecond},
		{3, 80 * time.Millisecond},
		{4, 80 * time.Millisecond},
		{100, 80 * time.Millisecond},
	} {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := b.Next(tc.attempt)
			if d < tc.ceil/2 || d > tc.ceil {
				t.Fatalf("Next(%d) = %v, want within [%v, %v]", tc.attempt, d, tc.ceil/2, tc.ceil)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("Next(%d) has no jitter", tc.attempt)
		}
	}
}

func TestBackoffDefaults(t *testing.T) {
	if d := (Backoff{}).Next(0); d <= 0 || d > 100*time.Millisecond {
		t.Fatalf("zero Backoff Next(0) = %v", d)
	}
	if d := (Backoff{Min: time.Second}).Next(5); d > time.Second {
		t.Fatalf("Max below Min must cap at Min, got %v", d)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context = %v", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep = %v", err)
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0) = %v", err)
	}
}
