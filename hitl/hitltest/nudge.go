package hitltest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// testNudges: a reminder is marked once, escalation steps one after the
// other, only while the approval is pending and unexpired; both are kept.
func testNudges(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	a := sample("NNNNNNNN", 0)
	mustCreate(t, s, a)
	at := base.Add(5 * time.Minute)
	if err := s.MarkReminded(ctx, a.Token, at); err != nil {
		t.Fatalf("MarkReminded: %v", err)
	}
	if err := s.MarkReminded(ctx, a.Token, at.Add(time.Minute)); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("second MarkReminded = %v, want ErrNotPending", err)
	}
	if err := s.MarkEscalated(ctx, a.Token, 1, at); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("MarkEscalated of step 1 before step 0 = %v, want ErrNotPending", err)
	}
	for step := range 2 {
		if err := s.MarkEscalated(ctx, a.Token, step, at); err != nil {
			t.Fatalf("MarkEscalated(%d): %v", step, err)
		}
	}
	if err := s.MarkEscalated(ctx, a.Token, 1, at); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("MarkEscalated of step 1 again = %v, want ErrNotPending", err)
	}
	got := mustGet(t, s, a.Token)
	if !got.Reminded.Equal(at) || got.Escalated != 2 || got.Status != record.StatusPending {
		t.Errorf("after the nudges: reminded %v, escalated %d, %s; want %v, 2, pending", got.Reminded, got.Escalated, got.Status, at)
	}
	if list, err := s.Approvals(ctx, record.StatusPending); err != nil || len(list) != 1 || list[0].Escalated != 2 || !list[0].Reminded.Equal(at) {
		t.Errorf("Approvals(pending) = %+v, %v; want the approval reminded at %v, escalated 2", list, err, at)
	}

	late := sample("LLLLLLLL", 0)
	mustCreate(t, s, late)
	if err := s.MarkReminded(ctx, late.Token, late.Expires); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("MarkReminded at the expiry instant = %v, want ErrNotPending", err)
	}
	if err := s.MarkEscalated(ctx, late.Token, 0, late.Expires); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("MarkEscalated at the expiry instant = %v, want ErrNotPending", err)
	}
	if _, err := s.ClaimApproval(ctx, late.Token, record.StatusDenied, "alpha:1", "", base); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkReminded(ctx, late.Token, base); !errors.Is(err, record.ErrNotPending) {
		t.Errorf("MarkReminded of a denied approval = %v, want ErrNotPending", err)
	}
	if err := s.MarkReminded(ctx, "ZZZZZZZZ", base); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("MarkReminded of an unknown token = %v, want ErrNotFound", err)
	}
	if err := s.MarkEscalated(ctx, "ZZZZZZZZ", 0, base); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("MarkEscalated of an unknown token = %v, want ErrNotFound", err)
	}
}

// testConcurrentNudges: of many concurrent callers, exactly one marks the
// reminder and one each escalation step.
func testConcurrentNudges(t *testing.T, s hitl.Store) {
	ctx := context.Background()
	a := sample("CNCNCNCN", 0)
	mustCreate(t, s, a)
	const n = 20
	var reminded, escalated atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := s.MarkReminded(ctx, a.Token, base.Add(time.Minute)); err == nil {
				reminded.Add(1)
			} else if !errors.Is(err, record.ErrNotPending) {
				t.Errorf("MarkReminded: %v", err)
			}
			if err := s.MarkEscalated(ctx, a.Token, 0, base.Add(time.Minute)); err == nil {
				escalated.Add(1)
			} else if !errors.Is(err, record.ErrNotPending) {
				t.Errorf("MarkEscalated: %v", err)
			}
		})
	}
	wg.Wait()
	if reminded.Load() != 1 || escalated.Load() != 1 {
		t.Errorf("%d callers: %d marked the reminder and %d the escalation; want 1 each", n, reminded.Load(), escalated.Load())
	}
}
