// Package startup carries two things through the context the bot starts
// under. A Trace (bot run -trace-startup) prints the phases of the
// start-up with their durations: each phase as it ends, one line on the
// trace's writer, with the time since the trace began (main) and since the
// previous phase, and what the phase cost besides time: the minor page
// faults the process took (on a virtual machine a fault can cost tens of
// microseconds: they are most of a start-up's time) and the heap bytes it
// allocated; a first line says what came before main. The wiring and the gateways mark their phases without a
// parameter of their own, and without a trace in the context a mark costs
// a context lookup. A Receiving is the moment the bot first receives (a
// gateway's first poll), which the work that can wait, such as the first
// prune, waits for, so that it does not delay it.
package startup

import (
	"context"
	"fmt"
	"io"
	"runtime"
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
	// cost reads the process's counters (faults, heap bytes allocated);
	// first and prev are their values at main and at the previous phase.
	cost        func() Cost
	first, prev Cost
}

// Cost is what the process has spent so far besides time: the minor page
// faults it took and the heap bytes it allocated.
type Cost struct {
	Faults int64
	Allocs uint64
}

// atMain is the faults the process had taken when main began (Begin), or
// -1 before Begin.
var atMain int64 = -1

// Begin is called first thing in main: it returns the time, the start of
// a trace, and records the faults taken so far, for the trace's line on
// what came before main. It costs one system call.
func Begin() time.Time {
	atMain = minorFaults()
	return time.Now()
}

// New returns a trace that began at start (main) and writes its lines to
// w.
func New(w io.Writer, start time.Time) *Trace {
	return &Trace{w: w, start: start, last: start, now: time.Now}
}

// WithCosts makes t print each phase's faults and heap bytes allocated
// too, and prints the first line, on what came before main: the time the
// main thread spent from exec, the page faults (as of Begin) and the heap
// bytes allocated (as of now), as far as the system tells them. It
// returns t.
func (t *Trace) WithCosts() *Trace { return t.withCosts(readCost) }

func (t *Trace) withCosts(cost func() Cost) *Trace {
	t.cost = cost
	t.first = t.cost()
	if atMain >= 0 {
		t.first.Faults = atMain
	}
	t.prev = t.first
	t.beforeMain()
	return t
}

// beforeMain prints the line for what came before main: the runtime's
// start and the packages' initialisation.
func (t *Trace) beforeMain() {
	// The main thread's time since exec less the time since main: main
	// runs on it, and nothing before the trace sleeps.
	run, ok := mainThreadTime()
	when := "?"
	if ok {
		when = "≈" + ms(run-time.Since(t.start))
	}
	fmt.Fprintf(t.w, "startup: before main: %s of the main thread since exec, %d faults, %s allocated (the runtime's start, the packages' init)\n",
		when, t.first.Faults, kib(t.first.Allocs))
}

// readCost reads the process's faults (getrusage) and its heap bytes
// allocated (runtime.ReadMemStats: it stops the world, which a trace
// can afford).
func readCost() Cost {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return Cost{Faults: minorFaults(), Allocs: m.TotalAlloc}
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
	if t.cost == nil {
		return
	}
	fmt.Fprintf(t.w, "startup: %d faults and %s allocated since main; %d faults and %s in all\n",
		t.prev.Faults-t.first.Faults, kib(t.prev.Allocs-t.first.Allocs), t.prev.Faults, kib(t.prev.Allocs))
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
	if t.cost == nil {
		fmt.Fprintf(t.w, "startup: %8s %8s  %s\n", ms(now.Sub(t.start)), "+"+ms(now.Sub(t.last)), phase)
		t.last = now
		return
	}
	c := t.cost()
	fmt.Fprintf(t.w, "startup: %8s %8s  %s  [%+d faults, %s]\n", ms(now.Sub(t.start)), "+"+ms(now.Sub(t.last)), phase,
		c.Faults-t.prev.Faults, "+"+kib(c.Allocs-t.prev.Allocs))
	t.last, t.prev = now, c
}

// ms formats d in milliseconds with two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

// kib formats n bytes in KiB.
func kib(n uint64) string {
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
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
