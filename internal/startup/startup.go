// Package startup carries two things through the context the bot starts
// under. A Trace (bot run -trace-startup) prints the phases of the
// start-up with their durations: each phase as it ends, one line on the
// trace's writer, with the time since the trace began (main) and since the
// previous phase; the wiring and the gateways mark their phases without a
// parameter of their own, and without a trace in the context a mark costs
// a context lookup. A Receiving is the moment the bot first receives (a
// gateway's first poll), which the work that can wait, such as the first
// prune, waits for, so that it does not delay it.
package startup

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
// receive: a long-polling gateway's first poll, sent): it opens the Receiving ctx
// carries and ends the trace, after which what is marked (another
// gateway's phases, or the same one's later) is not printed. Only the
// first call counts.
func Ready(ctx context.Context, phase string) {
	if r, _ := ctx.Value(receivingKey{}).(*Receiving); r != nil {
		r.Open()
	}
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

// Receiving is opened by the first Ready: the bot receives.
type Receiving struct {
	once sync.Once
	ch   chan struct{}
}

// NewReceiving returns a Receiving not yet open.
func NewReceiving() *Receiving { return &Receiving{ch: make(chan struct{})} }

type receivingKey struct{}

// WithReceiving returns ctx carrying r, for the gateways' Ready.
func WithReceiving(ctx context.Context, r *Receiving) context.Context {
	return context.WithValue(ctx, receivingKey{}, r)
}

// Open opens r (once: later calls do nothing); the first Ready calls it,
// and the wiring, when no gateway calls Ready.
func (r *Receiving) Open() { r.once.Do(func() { close(r.ch) }) }

// Wait waits until r is open (true) or ctx ends (false).
func (r *Receiving) Wait(ctx context.Context) bool {
	select {
	case <-r.ch:
		return true
	case <-ctx.Done():
		return false
	}
}
