package pairing_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/pairing"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestCheckReadsTheStore: a Manager whose set has not been read again
// since another one paired someone in their shared store does not know
// them from memory (Paired), and does once Check has read the store.
func TestCheckReadsTheStore(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gatehouse.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	opts := pairing.Options{Store: db, Audit: db, Now: func() time.Time { return now }, Refresh: time.Hour}
	one, err := pairing.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	two, err := pairing.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	const id = core.Identity("test:42")
	code, _, err := one.Offer(ctx, id, core.Conversation{Gateway: "test", Chat: "42"})
	if err != nil {
		t.Fatal(err)
	}
	if _, newcomer := two.Pair(ctx, "test:boss", core.Conversation{Gateway: "test", Chat: "boss"}, code); newcomer.Chat != "42" {
		t.Fatalf("/pair on the other manager did not pair (newcomer %+v)", newcomer)
	}
	if one.Paired(id) {
		t.Fatal("the first manager knew of the pairing before reading the store; the test shows nothing")
	}
	if ok, err := one.Check(ctx, id); !ok || err != nil {
		t.Fatalf("Check = %v, %v; want true once the store is read", ok, err)
	}
	if !one.Paired(id) {
		t.Error("after Check the set in memory still does not know the pairing")
	}
	if ok, err := one.Check(ctx, "test:43"); ok || err != nil {
		t.Errorf("Check of an identity never paired = %v, %v", ok, err)
	}
}
