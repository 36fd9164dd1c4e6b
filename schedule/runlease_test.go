package schedule

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestRunLeaseHoldsTheSlotsOfEveryInstance: two instances' schedulers on
// one store, with the run's lease (Options.Runs). Turns that end at once
// give their lease up at once: every slot runs, once, none is skipped.
// A turn that goes on past its slot holds the next slots on the other
// instance too (skipped and logged) until it ends; then the slots run
// again.
func TestRunLeaseHoldsTheSlotsOfEveryInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "gatehouse.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		entries := []Entry{{Name: "beat", Cron: "@every 2s", Conv: conv, Prompt: "b"}}
		logs := &testutil.SyncBuffer{}
		log := zerolog.New(logs)
		_, inA, cancelA, doneA := start(t, entries, Options{Slots: db, Runs: db, LeaseTTL: 15 * time.Second, Instance: "a", Log: log})
		defer func() { cancelA(); <-doneA }()
		_, inB, cancelB, doneB := start(t, entries, Options{Slots: db, Runs: db, LeaseTTL: 15 * time.Second, Instance: "b", Log: log})
		defer func() { cancelB(); <-doneB }()

		seen := map[string]int{}
		runs := 0
		for range 30 {
			time.Sleep(2 * time.Second)
			synctest.Wait()
			runs += drain(inA, seen) + drain(inB, seen)
		}
		if runs != 30 || len(seen) != 30 {
			t.Fatalf("%d runs of %d slots over 30 slots; want each run once:\n%s", runs, len(seen), logs)
		}
		if strings.Contains(logs.String(), "the previous run is still going") {
			t.Fatalf("a slot was skipped though every turn had ended:\n%s", logs)
		}

		// The next run's turn goes on for 10 slots.
		var held []func()
		for len(held) == 0 {
			time.Sleep(2 * time.Second)
			synctest.Wait()
			for _, in := range []*inbox{inA, inB} {
				got, _ := in.signals()
				for _, sig := range got {
					held = append(held, sig.Done)
				}
				in.mu.Lock()
				in.got, in.at = nil, nil
				in.mu.Unlock()
			}
		}
		before := len(logs.String())
		for range 10 {
			time.Sleep(2 * time.Second)
			synctest.Wait()
			if n := drain(inA, seen) + drain(inB, seen); n != 0 {
				t.Fatalf("%d runs while the previous run's turn was going", n)
			}
		}
		if !strings.Contains(logs.String()[before:], "it is still running on another instance") {
			t.Errorf("the other instance's skips are not logged as such:\n%s", logs)
		}
		for _, done := range held {
			done()
		}
		synctest.Wait()
		runs = 0
		for range 5 {
			time.Sleep(2 * time.Second)
			synctest.Wait()
			runs += drain(inA, seen) + drain(inB, seen)
		}
		if runs != 5 {
			t.Errorf("%d runs in the 5 slots after the long turn ended, want 5", runs)
		}
	})
}
