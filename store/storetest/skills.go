package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// SkillContract tests store.Skills on two handles a and b (two instances
// on one database): none recorded is an empty list; what a records b
// reads, by name; a later state replaces the earlier (disabled, then
// enabled with another digest); an empty name or digest is refused.
func SkillContract(t *testing.T, newPair func(t *testing.T) (a, b store.Skills)) {
	t.Helper()
	ctx := context.Background()
	a, b := newPair(t)
	if got, err := b.SkillStates(ctx); err != nil || len(got) != 0 {
		t.Fatalf("SkillStates of a new store = %v, %v; want none", got, err)
	}
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	first := record.SkillState{Name: "restart-billing", Digest: "d1", Enabled: true, By: "chat:9", At: at}
	if err := a.SetSkillState(ctx, first); err != nil {
		t.Fatal(err)
	}
	other := record.SkillState{Name: "cert-rotation", Digest: "c1", Enabled: true, By: "local:operator", At: at}
	if err := a.SetSkillState(ctx, other); err != nil {
		t.Fatal(err)
	}
	got, err := b.SkillStates(ctx)
	if err != nil || len(got) != 2 || got[0] != other || got[1] != first {
		t.Fatalf("SkillStates from the other instance = %v, %v; want %v then %v", got, err, other, first)
	}
	off := first
	off.Enabled, off.By, off.At = false, "chat:U1", at.Add(time.Minute)
	if err := b.SetSkillState(ctx, off); err != nil {
		t.Fatal(err)
	}
	again := first
	again.Digest, again.At = "d2", at.Add(2*time.Minute)
	if err := a.SetSkillState(ctx, again); err != nil {
		t.Fatal(err)
	}
	got, err = b.SkillStates(ctx)
	if err != nil || len(got) != 2 || got[1] != again {
		t.Fatalf("after disable and enable again: %v, %v; want %v for restart-billing", got, err, again)
	}
	for _, bad := range []record.SkillState{{Digest: "x"}, {Name: "x"}} {
		if err := a.SetSkillState(ctx, bad); err == nil {
			t.Errorf("SetSkillState(%+v) = nil; want an error", bad)
		}
	}
}
