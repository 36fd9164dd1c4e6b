// Package starttrace prints the phases of the bot's start-up with their
// durations (bot run -trace-startup): each phase as it ends, one line on
// the trace's writer, with the time since the trace began (main) and since
// the previous phase. The trace travels in the context the start-up runs
// under, so the wiring and the gateways mark their phases without a
// parameter of its own; without a trace in the context marking costs a
// context lookup and nothing else.
package starttrace

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// Trace is a start-up's phases. The zero value is not usable: see New.
type Trace struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	last  time.Time
	now   func() time.Time
	ended bool
}

// New returns a trace that began at start and writes its lines to w.
func New(w io.Writer, start time.Time) *Trace {
	return &Trace{w: w, start: start, last: start, now: time.Now}
}

type key struct{}

// With returns ctx carrying t.
func With(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, key{}, t)
}

// From returns the trace ctx carries, or nil.
func From(ctx context.Context) *Trace {
	t, _ := ctx.Value(key{}).(*Trace)
	return t
}

// Mark ends the phase called phase, in the trace ctx carries, if any.
func Mark(ctx context.Context, phase string) {
	From(ctx).Mark(phase)
}

// Ready marks the phase that makes the bot answer (a gateway's first
// receive: Telegram's first getUpdates, sent) and ends the trace: what is
// marked afterwards (another gateway's, or the same one's later) is not
// printed.
func Ready(ctx context.Context, phase string) {
	t := From(ctx)
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	t.mark(phase)
	fmt.Fprintf(t.w, "startup: %s total to the first receive\n", ms(t.last.Sub(t.start)))
	t.ended = true
}

// Mark ends the phase called phase: it prints the time since the trace
// began and since the previous phase. A nil trace does nothing.
func (t *Trace) Mark(phase string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.mark(phase)
	}
}

func (t *Trace) mark(phase string) {
	now := t.now()
	fmt.Fprintf(t.w, "startup: %8s %8s  %s\n", ms(now.Sub(t.start)), "+"+ms(now.Sub(t.last)), phase)
	t.last = now
}

// ms formats d in milliseconds with two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}
