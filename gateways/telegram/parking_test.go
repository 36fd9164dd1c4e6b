package telegram

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

func withParking(p gateways.Parking) option { return func(_ *Config, d *Deps) { d.Parking = p } }

// giveUp holds update 100 in progress and finishes enough later ones that
// 100 is given up past maxHeld.
func giveUp(t *testing.T) *offsets {
	t.Helper()
	o := newOffsets(0, nil)
	o.start(100)
	var released []int
	for id := 101; id < 101+maxHeld; id++ {
		released = append(released, o.start(id)...)
		o.finish(id)
	}
	if !slices.Equal(released, []int{100}) {
		t.Fatalf("released %v, want 100", released)
	}
	return o
}

func TestGivenUpUpdateIsParkedUntilDone(t *testing.T) {
	o := giveUp(t)
	ids, lost := o.toPark()
	if !slices.Equal(ids, []int{100}) || lost != nil {
		t.Fatalf("toPark = %v, %v; want [100], none lost", ids, lost)
	}
	if again, _ := o.toPark(); again != nil {
		t.Fatalf("toPark again = %v; the write is under way", again)
	}
	if unpark := o.parkedAs(ids, true); unpark != nil {
		t.Fatalf("parkedAs = %v; nothing was done meanwhile", unpark)
	}
	if !o.finish(100) {
		t.Fatal("finish(100) = false; its parked body must be unparked")
	}
	if o.finish(100) {
		t.Fatal("a second finish(100) asks to unpark again")
	}
}

func TestUpdateDoneWhileParkedIsUnparkedAfterTheWrite(t *testing.T) {
	o := giveUp(t)
	ids, _ := o.toPark()
	if o.finish(100) {
		t.Fatal("finish during the write asks to unpark what is not written yet")
	}
	if unpark := o.parkedAs(ids, true); !slices.Equal(unpark, []int{100}) {
		t.Fatalf("parkedAs = %v; want 100, done during its write", unpark)
	}
}

func TestUpdateDoneBeforeParkingIsNotParked(t *testing.T) {
	o := giveUp(t)
	if o.finish(100) {
		t.Fatal("finish before the write asks to unpark")
	}
	if ids, _ := o.toPark(); ids != nil {
		t.Fatalf("toPark = %v; 100 is done", ids)
	}
}

func TestUpdatesPastMaxParkedAreLost(t *testing.T) {
	o := newOffsets(0, nil)
	id := 0
	for range maxParked + maxHeld { // maxHeld-1 stay held: maxParked+1 given up
		o.start(id) // never done
		id++
	}
	ids, lost := o.toPark()
	if len(ids) != maxParked || len(lost) != 1 || lost[0] != maxParked {
		t.Fatalf("toPark: %d to park, lost %v; want %d and [%d]", len(ids), lost, maxParked, maxParked)
	}
}

func TestRestoredUpdatesAreNotHandedOverTwice(t *testing.T) {
	o := newOffsets(200, nil)
	o.restore([]int{150, 205})
	if !o.seen(205) {
		t.Fatal("a restored update Telegram still holds is not seen: a poll would hand it over twice")
	}
	for id := 200; id < 205; id++ {
		o.start(id)
		o.finish(id)
	}
	o.pass(205)
	if off, _ := o.next(); off != 205 {
		t.Fatalf("offset %d; want 205, still in progress", off)
	}
	if !o.finish(205) || !o.finish(150) {
		t.Fatal("a restored update done is not unparked")
	}
	if off, _ := o.next(); off != 206 {
		t.Fatalf("offset %d after 205 is done; want 206", off)
	}
}

// TestRestartLosesNoUpdateGivenUpPastMaxHeld: more messages in progress at
// once than the gateway may hold back from Telegram; the oldest are
// confirmed anyway. A crash then (none done) must still hand every one
// over again after the restart, each once: those confirmed from the
// store's parking, the rest from Telegram.
func TestRestartLosesNoUpdateGivenUpPastMaxHeld(t *testing.T) {
	cursors, parking := &memStore{}, newMemParking()
	fake := newFake()
	first := newHarnessOn(t, fake, withCursors(cursors), withParking(parking))
	first.inbox.KeepDone = true
	const n = maxHeld + 5
	for i := range n {
		fake.InjectMessage(dm(alice, fmt.Sprintf("m-%d", i)))
	}
	first.start()
	for range n {
		first.inbox.Next(t)
	}
	testutil.WaitFor(t, "the oldest updates confirmed to Telegram", func() bool { return fake.Pending() < n })
	testutil.WaitFor(t, "the confirmed updates parked", func() bool { return len(parkedIDs(t, parking, first.gw)) == n-fake.Pending() })
	first.stop() // a crash: none is done

	second := newHarnessOn(t, fake, withCursors(cursors), withParking(parking))
	second.inbox.KeepDone = true
	second.start()
	got := map[string]core.Signal{}
	for range n {
		s := second.inbox.Next(t)
		if _, twice := got[s.Text]; twice {
			t.Fatalf("after the restart %q was handed over twice", s.Text)
		}
		got[s.Text] = s
	}
	for i := range n {
		if _, ok := got[fmt.Sprintf("m-%d", i)]; !ok {
			t.Fatalf("after the restart m-%d was lost (handed over: %d of %d)", i, len(got), n)
		}
	}
	for _, s := range got {
		s.Done()
	}
	testutil.WaitFor(t, "every update confirmed and unparked", func() bool {
		return fake.Pending() == 0 && len(parkedIDs(t, parking, second.gw)) == 0
	})
	second.inbox.Empty(t)
	if logs := first.logs.String(); strings.Contains(logs, "would lose them") {
		t.Fatalf("a given-up update was not parked: %s", logs)
	}
}

// TestGivenUpUpdatesParkedNotWarned: updates given up past maxHeld are
// parked with their bodies as Telegram sent them, before the batch ends,
// and no warning says a crash would lose them.
func TestGivenUpUpdatesParkedNotWarned(t *testing.T) {
	parking := newMemParking()
	h, raws := handOverGivingUp(t, parking)
	got, _ := parking.Parked(context.Background(), h.gw.parkScope(), maxParked)
	if len(got) != 11 {
		t.Fatalf("%d updates parked; want 11, those given up", len(got))
	}
	for id := range int64(11) {
		if string(got[id+1]) != string(raws[id]) {
			t.Fatalf("update %d parked as %q; want its body %q", id+1, got[id+1], raws[id])
		}
	}
	if logs := h.logs.String(); strings.Contains(logs, "would lose") {
		t.Fatalf("parked updates warned about as lost: %s", logs)
	}
}

// TestPollingAgainDoesNotHandOverItsOwnParkedUpdates: polling starts
// again in the same process (a lease taken back) while updates it parked
// are still in its engine: they are not handed over a second time, and
// leave the store once done.
func TestPollingAgainDoesNotHandOverItsOwnParkedUpdates(t *testing.T) {
	parking := newMemParking()
	h, _ := handOverGivingUp(t, parking)
	ctx := context.Background()
	var handed []core.Signal
	for range maxHeld + 10 {
		handed = append(handed, h.inbox.Next(t))
	}
	if err := h.gw.handOverParked(ctx, h.inbox, newOffsets(maxHeld+11, nil)); err != nil {
		t.Fatalf("handOverParked: %v", err)
	}
	h.inbox.Empty(t)
	for _, s := range handed {
		s.Done()
	}
	if ids := parkedIDs(t, parking, h.gw); len(ids) != 0 {
		t.Fatalf("parked after every update is done: %v", ids)
	}
}

// blockingParking holds each Park until released.
type blockingParking struct {
	*memParking
	entered, release chan struct{}
}

func (p blockingParking) Park(ctx context.Context, scope string, updates map[int64][]byte) error {
	p.entered <- struct{}{}
	<-p.release
	return p.memParking.Park(ctx, scope, updates)
}

// TestNoOffsetSavedPastAnUpdateBeingParked: an update done while the
// batch's given-up updates are being parked does not persist an offset
// past them: a crash then would start polling beyond updates that are
// neither parked nor confirmed done.
func TestNoOffsetSavedPastAnUpdateBeingParked(t *testing.T) {
	cursors := &memStore{}
	parking := blockingParking{newMemParking(), make(chan struct{}), make(chan struct{})}
	h := newHarness(t, withCursors(cursors), withParking(parking))
	h.inbox.KeepDone = true
	ended := make(chan error, 1)
	go func() {
		_, err := h.gw.deliverBatch(context.Background(), h.inbox, newOffsets(1, nil), messageBatch(maxHeld+10))
		ended <- err
	}()
	var last core.Signal
	for range maxHeld + 10 {
		last = h.inbox.Next(t)
	}
	<-parking.entered
	last.Done() // update 100: saves the offset unless the batch is still being handed over
	cursors.mu.Lock()
	saved := cursors.m["telegram:777000111:offset"]
	cursors.mu.Unlock()
	close(parking.release)
	if err := <-ended; err != nil {
		t.Fatalf("deliverBatch: %v", err)
	}
	if saved != "" {
		t.Fatalf("offset %q saved while updates 1 to 11 were being parked", saved)
	}
}

// handOverGivingUp hands a batch of maxHeld+10 messages, none done, to a
// gateway parking in parking: updates 1 to 11 are given up.
func handOverGivingUp(t *testing.T, parking gateways.Parking) (*harness, [][]byte) {
	t.Helper()
	h := newHarness(t, withParking(parking))
	h.inbox.KeepDone = true
	raws := messageBatch(maxHeld + 10)
	if _, err := h.gw.deliverBatch(context.Background(), h.inbox, newOffsets(1, nil), raws); err != nil {
		t.Fatalf("deliverBatch: %v", err)
	}
	return h, raws
}

func parkedIDs(t *testing.T, p gateways.Parking, g *Gateway) []int64 {
	t.Helper()
	m, err := p.Parked(context.Background(), g.parkScope(), maxParked)
	if err != nil {
		t.Fatalf("Parked: %v", err)
	}
	var ids []int64
	for id := range m {
		ids = append(ids, id)
	}
	return ids
}
