package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// pairingCode makes the record of code for id, handed out now for an hour.
func pairingCode(id core.Identity, code string, now time.Time) record.PairingCode {
	sum := sha256.Sum256([]byte(code))
	return record.PairingCode{Identity: id, Conv: string(id), Code: code, Hash: hex.EncodeToString(sum[:]), Created: now, Expires: now.Add(time.Hour)}
}

// PairingContract tests a store.Pairings: one code per identity while it
// is valid (under concurrent offers too), a new one once it expired; at
// most store.MaxPairingCodes pending, the oldest forgotten first; a code
// pairs once (of concurrent callers, one), never after it expired, never
// with a wrong hash or for another identity; a paired identity gets no
// code; the paired are listed and can be unpaired. newPairings must make
// the store read its time from now.
func PairingContract(t *testing.T, newPairings func(t *testing.T, now func() time.Time) store.Pairings) {
	t.Helper()
	t.Run("same code while valid", func(t *testing.T) { pairingSameCodeWhileValid(t, newPairings) })
	t.Run("concurrent offers give one code", func(t *testing.T) { pairingConcurrentOffers(t, newPairings) })
	t.Run("at most MaxPairingCodes, oldest first out", func(t *testing.T) { pairingAtMostMax(t, newPairings) })
	t.Run("pair once, then listed and unpaired", func(t *testing.T) { pairingPairOnce(t, newPairings) })
	t.Run("expired code does not pair", func(t *testing.T) { pairingExpiredCode(t, newPairings) })
}

// newPairingsFunc is PairingContract's newPairings: a fresh
// store.Pairings reading its time from now.
type newPairingsFunc = func(t *testing.T, now func() time.Time) store.Pairings

// pairingSameCodeWhileValid checks that an identity gets the same code
// while it is valid and a new one once it expired, and that another
// identity cannot be offered a pending code.
func pairingSameCodeWhileValid(t *testing.T, newPairings newPairingsFunc) {
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newPairings(t, clock.Now)
	first := pairingCode("gw:1", "AAAA2222", clock.Now())
	got, err := s.OfferPairingCode(ctx, first)
	if err != nil || got.Code != first.Code || got.Identity != first.Identity || got.Conv != first.Conv || !got.Expires.Equal(first.Expires) {
		t.Fatalf("first offer = %+v, %v; want %+v", got, err, first)
	}
	clock.Set(clusterEpoch.Add(59 * time.Minute))
	if got, err := s.OfferPairingCode(ctx, pairingCode("gw:1", "BBBB3333", clock.Now())); err != nil || got.Code != first.Code {
		t.Fatalf("offer within the hour = %+v, %v; want the first code %s", got, err, first.Code)
	}
	clock.Set(clusterEpoch.Add(time.Hour))
	if list, err := s.PairingCodes(ctx); err != nil || len(list) != 0 {
		t.Fatalf("PairingCodes after expiry = %+v, %v; want none", list, err)
	}
	next := pairingCode("gw:1", "CCCC4444", clock.Now())
	if got, err := s.OfferPairingCode(ctx, next); err != nil || got.Code != next.Code {
		t.Fatalf("offer after expiry = %+v, %v; want the new code %s", got, err, next.Code)
	}
	if _, err := s.OfferPairingCode(ctx, pairingCode("gw:2", "CCCC4444", clock.Now())); !errors.Is(err, record.ErrDuplicate) {
		t.Fatalf("another identity's pending code offered: err %v; want record.ErrDuplicate", err)
	}
}

// pairingConcurrentOffers checks that concurrent offers for one identity
// give one code.
func pairingConcurrentOffers(t *testing.T, newPairings newPairingsFunc) {
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newPairings(t, clock.Now)
	codes := make(chan string, 20)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.OfferPairingCode(ctx, pairingCode("gw:U1", fmt.Sprintf("CODE%04d", i), clock.Now()))
			if err != nil {
				t.Errorf("offer %d: %v", i, err)
			}
			codes <- c.Code
		}()
	}
	wg.Wait()
	close(codes)
	seen := map[string]bool{}
	for c := range codes {
		seen[c] = true
	}
	if len(seen) != 1 {
		t.Fatalf("20 concurrent offers for one identity gave codes %v; want one", seen)
	}
}

// pairingAtMostMax checks that at most store.MaxPairingCodes are
// pending, the oldest forgotten first.
func pairingAtMostMax(t *testing.T, newPairings newPairingsFunc) {
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newPairings(t, clock.Now)
	n := store.MaxPairingCodes + 50
	for i := range n {
		id := core.Identity(fmt.Sprintf("gw:%d", i))
		if _, err := s.OfferPairingCode(ctx, pairingCode(id, fmt.Sprintf("F%07d", i), clock.Now())); err != nil {
			t.Fatalf("offer %d: %v", i, err)
		}
	}
	list, err := s.PairingCodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != store.MaxPairingCodes {
		t.Fatalf("%d codes pending after %d offers; want %d", len(list), n, store.MaxPairingCodes)
	}
	if want := core.Identity(fmt.Sprintf("gw:%d", n-store.MaxPairingCodes)); list[0].Identity != want {
		t.Errorf("oldest pending is %s; want %s (the older ones forgotten first)", list[0].Identity, want)
	}
	if last := list[len(list)-1]; last.Identity != core.Identity(fmt.Sprintf("gw:%d", n-1)) {
		t.Errorf("newest pending is %s; want the last offered", last.Identity)
	}
	old := pairingCode("gw:0", "F0000000", clusterEpoch)
	if _, err := s.Pair(ctx, old.Identity, old.Hash, "gw:approver"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("a forgotten code paired: err %v; want record.ErrNotFound", err)
	}
}

// pairingPairOnce checks that a code pairs once (of concurrent callers,
// one), never with a wrong hash or for another identity; that a paired
// identity gets no code; and that the paired are listed and can be
// unpaired.
func pairingPairOnce(t *testing.T, newPairings newPairingsFunc) {
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newPairings(t, clock.Now)
	c := pairingCode("gw2:42", "PAIR2345", clock.Now())
	if _, err := s.OfferPairingCode(ctx, c); err != nil {
		t.Fatal(err)
	}
	wrong := pairingCode("gw2:42", "PAIR2346", clock.Now())
	if _, err := s.Pair(ctx, c.Identity, wrong.Hash, "gw:approver"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("wrong hash paired: err %v; want record.ErrNotFound", err)
	}
	if _, err := s.Pair(ctx, "gw2:43", c.Hash, "gw:approver"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("another identity paired with the code: err %v; want record.ErrNotFound", err)
	}
	pairConcurrently(t, s, c, clock)
	if list, err := s.PairingCodes(ctx); err != nil || len(list) != 0 {
		t.Fatalf("codes pending after the pairing: %+v, %v; want none (single use)", list, err)
	}
	if _, err := s.OfferPairingCode(ctx, pairingCode(c.Identity, "NEWC2345", clock.Now())); !errors.Is(err, record.ErrPaired) {
		t.Fatalf("a code offered to a paired identity: err %v; want record.ErrPaired", err)
	}
	list, err := s.PairedIdentities(ctx)
	if err != nil || len(list) != 1 || list[0].Identity != c.Identity || list[0].By != "gw2:UAPPROVER" || list[0].Conv != c.Conv {
		t.Fatalf("PairedIdentities = %+v, %v; want gw2:42 by gw2:UAPPROVER", list, err)
	}
	if p, err := s.Unpair(ctx, c.Identity); err != nil || p.Identity != c.Identity {
		t.Fatalf("Unpair = %+v, %v", p, err)
	}
	if _, err := s.Unpair(ctx, c.Identity); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("second Unpair: err %v; want record.ErrNotFound", err)
	}
	if list, err := s.PairedIdentities(ctx); err != nil || len(list) != 0 {
		t.Fatalf("PairedIdentities after Unpair = %+v, %v; want none", list, err)
	}
}

// pairingExpiredCode checks that an expired code does not pair.
func pairingExpiredCode(t *testing.T, newPairings newPairingsFunc) {
	ctx := context.Background()
	clock := NewClock(clusterEpoch)
	s := newPairings(t, clock.Now)
	c := pairingCode("gw:7", "EXPD2345", clock.Now())
	if _, err := s.OfferPairingCode(ctx, c); err != nil {
		t.Fatal(err)
	}
	clock.Set(c.Expires)
	if _, err := s.Pair(ctx, c.Identity, c.Hash, "gw:approver"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("expired code paired: err %v; want record.ErrNotFound", err)
	}
	if list, err := s.PairedIdentities(ctx); err != nil || len(list) != 0 {
		t.Fatalf("PairedIdentities = %+v, %v; want none", list, err)
	}
}

// pairConcurrently has 10 concurrent callers pair the pending code c,
// and checks that one pairs it, by gw2:UAPPROVER at the clock's time,
// and the other 9 find no code.
func pairConcurrently(t *testing.T, s store.Pairings, c record.PairingCode, clock *Clock) {
	t.Helper()
	ctx := context.Background()
	var wins, lost int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := s.Pair(ctx, c.Identity, c.Hash, "gw2:UAPPROVER")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && p.Identity == c.Identity && p.Conv == c.Conv && p.By == "gw2:UAPPROVER" && p.At.Equal(clock.Now()):
				wins++
			case errors.Is(err, record.ErrNotFound):
				lost++
			default:
				t.Errorf("Pair = %+v, %v", p, err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || lost != 9 {
		t.Fatalf("10 concurrent /pair of one code: %d paired, %d not found; want 1 and 9", wins, lost)
	}
}
