package telegram

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxHeld bounds the updates kept unconfirmed at or above the oldest one
// still in progress. getUpdates returns at most 100 updates from its
// offset, so holding the offset back for more would hide every newer
// update; past the bound the oldest update in progress is confirmed anyway,
// its body parked in the store first (see maxParked).
const maxHeld = 90

// maxParked bounds the updates given up past maxHeld that are tracked
// until done (see parking.go): their bodies are parked in the store, and
// a restart hands them over again. Past it, one is given up untracked,
// and a crash before it is done loses it (a warning says so).
const maxParked = 1000

// parkState is where an update given up past maxHeld stands with the
// store's parking.
type parkState uint8

const (
	unparked    parkState = iota // given up; its body not written yet
	parking                      // its body being written
	parked                       // its body in the store until it is done
	doneParking                  // done while its body was written: to be unparked once written
)

// offsets decides what the next getUpdates confirms. Telegram forgets the
// updates below the offset it is polled with, so the offset moves past an
// update only once the engine is done with it (Signal.Done) or it produced
// no signal: a crash then loses nothing, and Telegram delivers what was in
// progress again. The updates already done above the oldest one in
// progress are remembered too (and persisted with the offset), so that
// such a re-delivery does not replay them. It is safe for concurrent use.
type offsets struct {
	mu       sync.Mutex
	base     int          // every update below is done; the next poll's offset
	held     map[int]bool // update id at or above base → done
	top      int          // highest update id handed over or passed in a batch
	progress chan struct{}
	givenUp  map[int]parkState // given up past maxHeld, not done yet
	lost     []int             // given up past maxParked, untracked: for the warning
}

// newOffsets starts at base with the updates in done already done.
func newOffsets(base int, done []int) *offsets {
	o := &offsets{base: base, held: make(map[int]bool), top: base - 1, progress: make(chan struct{}),
		givenUp: make(map[int]parkState)}
	// top is not raised to the loaded done ids: the updates between base
	// and them have not been handed over again yet, and must not be
	// skipped. advanceLocked steps over done ids once base reaches them.
	for _, id := range done {
		if id >= base {
			o.held[id] = true
		}
	}
	return o
}

// next returns the offset to poll with, and a channel closed once it
// moves.
func (o *offsets) next() (int, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.base, o.progress
}

// seen reports whether update id was handed over already (or is done).
func (o *offsets) seen(id int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.held[id]
	return ok || id < o.base
}

// start records that update id is being handed over. It returns the ids
// that had to be given up to keep within maxHeld.
func (o *offsets) start(id int) (released []int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held[id] = false
	o.top = max(o.top, id)
	return o.advanceLocked()
}

// unstart takes back start(id) of the newest update handed over: it was
// refused (the store unreachable) and is to be handed over again, so the
// offset stays at or below it and Telegram keeps it.
func (o *offsets) unstart(id int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if done, ok := o.held[id]; !ok || done {
		return
	}
	delete(o.held, id)
	if o.top >= id {
		o.top = id - 1
	}
	o.advanceLocked()
}

// pass records that a batch went past update id, done before a restart:
// every update before it in the batch was handed over already, so base may
// move beyond it (also over gaps in Telegram's numbering).
func (o *offsets) pass(id int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if id > o.top {
		o.top = id
		o.advanceLocked()
	}
}

// finish records that update id is done, and reports whether its body
// is parked in the store and is to be unparked now.
func (o *offsets) finish(id int) (unpark bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if st, ok := o.givenUp[id]; ok {
		switch st {
		case unparked: // done before its body was written: never will be
			delete(o.givenUp, id)
		case parking:
			o.givenUp[id] = doneParking
		case parked:
			delete(o.givenUp, id)
			unpark = true
		}
	}
	if _, ok := o.held[id]; !ok {
		return unpark // below base: given up on, or done already
	}
	o.held[id] = true
	o.advanceLocked()
	return unpark
}

// advanceLocked moves base to the oldest update in progress (past the top
// when none is), giving up on the oldest ones while more than maxHeld
// updates are held; o.mu is held.
func (o *offsets) advanceLocked() (released []int) {
	old := o.base
	for {
		o.base = o.top + 1
		for id, done := range o.held {
			if !done && id < o.base {
				o.base = id
			}
		}
		for o.held[o.base] { // done before a restart, now reached
			o.base++
		}
		for id := range o.held {
			if id < o.base {
				delete(o.held, id)
			}
		}
		if len(o.held) < maxHeld {
			break
		}
		o.held[o.base] = true
		released = append(released, o.base)
		switch _, ok := o.givenUp[o.base]; {
		case ok: // handed over again from the store, and parked still
		case len(o.givenUp) < maxParked:
			o.givenUp[o.base] = unparked
		default:
			o.lost = append(o.lost, o.base)
		}
	}
	if o.base != old {
		close(o.progress)
		o.progress = make(chan struct{})
	}
	return released
}

// value is the cursor to persist: "BASE", then ";" and the done updates
// above it as comma-separated distances from BASE ("1005;2,3,7").
func (o *offsets) value() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var done []int
	for id, ok := range o.held {
		if ok {
			done = append(done, id-o.base)
		}
	}
	slices.Sort(done)
	var b strings.Builder
	b.WriteString(strconv.Itoa(o.base))
	sep := ";"
	for _, d := range done {
		b.WriteString(sep + strconv.Itoa(d))
		sep = ","
	}
	return b.String()
}

// parseOffsets reads a cursor written by value (or a bare offset).
func parseOffsets(v string) (base int, done []int, err error) {
	head, tail, more := strings.Cut(v, ";")
	if base, err = strconv.Atoi(head); err != nil {
		return 0, nil, fmt.Errorf("offset %q: %w", head, err)
	}
	if !more {
		return base, nil, nil
	}
	for _, f := range strings.Split(tail, ",") {
		d, err := strconv.Atoi(f)
		if err != nil || d <= 0 {
			return 0, nil, fmt.Errorf("done update %q: not a positive distance", f)
		}
		done = append(done, base+d)
	}
	return base, done, nil
}

// toPark returns the updates given up whose bodies are to be written to
// the store now, lowest first, marked as being written, and the updates
// given up untracked since the last call.
func (o *offsets) toPark() (ids, lost []int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, st := range o.givenUp {
		if st == unparked {
			o.givenUp[id] = parking
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	lost, o.lost = o.lost, nil
	return ids, lost
}

// parkedAs records how the write of ids' bodies ended (toPark), and
// returns those done meanwhile whose written bodies are to be unparked.
// Bodies not written are not tried again: after this batch Telegram no
// longer sends them.
func (o *offsets) parkedAs(ids []int, written bool) (unpark []int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range ids {
		switch st, ok := o.givenUp[id]; {
		case !ok:
		case st == doneParking:
			delete(o.givenUp, id)
			if written {
				unpark = append(unpark, id)
			}
		case written:
			o.givenUp[id] = parked
		default:
			delete(o.givenUp, id)
		}
	}
	return unpark
}

// restore records updates whose bodies a restart found parked, before
// they are handed over again: each is parked until done, and one Telegram
// still holds (at or above base) is in progress, so that a poll does not
// hand it over a second time.
func (o *offsets) restore(ids []int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range ids {
		o.givenUp[id] = parked
		if id >= o.base {
			o.held[id] = false
		}
	}
}

// unrestore takes back restore for updates not handed over after all:
// those Telegram still holds are handed over when a poll brings them
// again. They stay parked until done.
func (o *offsets) unrestore(ids []int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range ids {
		if done, ok := o.held[id]; ok && !done {
			delete(o.held, id)
		}
	}
	o.advanceLocked()
}
