package testutil

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
)

// Inbox is a gateway's inbox for gateway tests (it implements
// gateways.Inbox): it records the signals submitted to it and, like an
// engine that finishes each signal at once, calls its Done right after
// taking it, unless KeepDone is set (the test then calls Done itself).
type Inbox struct {
	ch chan core.Signal
	// After, when set, is called after a signal is taken.
	After func(core.Signal)
	// KeepDone leaves calling Signal.Done to the test.
	KeepDone bool
}

// NewInbox returns an Inbox that holds up to 100 signals not yet read.
func NewInbox() *Inbox { return &Inbox{ch: make(chan core.Signal, 100)} }

// Submit records s; it waits while 100 signals are unread, until ctx ends.
func (r *Inbox) Submit(ctx context.Context, s core.Signal) error {
	select {
	case r.ch <- s:
	case <-ctx.Done():
		return ctx.Err()
	}
	if r.After != nil {
		r.After(s)
	}
	if !r.KeepDone && s.Done != nil {
		s.Done()
	}
	return nil
}

// Signals is the channel of recorded signals, for benchmarks.
func (r *Inbox) Signals() <-chan core.Signal { return r.ch }

// Next returns the next recorded signal, failing the test if none arrives
// within HangGuard.
func (r *Inbox) Next(tb testing.TB) core.Signal {
	tb.Helper()
	select {
	case s := <-r.ch:
		return s
	case <-time.After(HangGuard):
		tb.Fatal("no signal arrived")
		return core.Signal{}
	}
}

// Empty fails the test if a signal was recorded and not yet read.
func (r *Inbox) Empty(tb testing.TB) {
	tb.Helper()
	select {
	case s := <-r.ch:
		tb.Fatalf("unexpected signal %+v", s)
	default:
	}
}
