package schedule

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"
	"github.com/gatehouse-bot/gatehouse/store/sqlite"
)

// TestEveryIsAlignedToTheEpoch: "@every d" runs at the multiples of d since
// the Unix epoch, whenever it is asked, in the asker's time zone.
func TestEveryIsAlignedToTheEpoch(t *testing.T) {
	berlin, err := Location("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		spec     string
		from     time.Time
		wantNext time.Time
	}{
		{"@every 1h", time.Date(2026, 11, 27, 0, 10, 33, 5, time.UTC), time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)},
		{"@every 1h", time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC), time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)},
		{"@every 90s", time.Date(2026, 11, 27, 0, 0, 1, 0, time.UTC), time.Date(2026, 11, 27, 0, 1, 30, 0, time.UTC)},
		{"@every 7s", time.Unix(20, 0).UTC(), time.Unix(21, 0).UTC()},
		{"@every 7s", time.Unix(-1, 0).UTC(), time.Unix(0, 0).UTC()},
		{"@every 7s", time.Unix(-8, 0).UTC(), time.Unix(-7, 0).UTC()},
		{"@every 1500ms", time.Unix(0, 0).UTC(), time.Unix(1, 0).UTC()}, // whole seconds, as robfig/cron
		{"@every 1h", time.Date(2026, 11, 27, 1, 30, 0, 0, berlin), time.Date(2026, 11, 27, 2, 0, 0, 0, berlin)},
	}
	for _, c := range cases {
		s, err := Parse(c.spec, "")
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.spec, err)
		}
		got := s.Next(c.from)
		if !got.Equal(c.wantNext) || got.Location() != c.from.Location() {
			t.Errorf("Parse(%q).Next(%v) = %v, want %v", c.spec, c.from, got, c.wantNext)
		}
	}
	// Two instances started at different times agree on the slots.
	s, _ := Parse("@every 10m", "")
	a := time.Date(2026, 11, 27, 9, 1, 0, 0, time.UTC)
	b := time.Date(2026, 11, 27, 9, 7, 59, 0, time.UTC)
	if na, nb := s.Next(a), s.Next(b); !na.Equal(nb) {
		t.Errorf("@every 10m from %v: %v; from %v: %v; want the same slot", a, na, b, nb)
	}
}

// drain marks every run's turn as ended and returns how many there were,
// by schedule and slot.
func drain(in *inbox, seen map[string]int) int {
	got, _ := in.signals()
	for _, sig := range got {
		seen[sig.Schedule+"@"+sig.At.UTC().Format(time.TimeOnly)]++
		sig.Done()
	}
	in.mu.Lock()
	in.got, in.at = nil, nil
	in.mu.Unlock()
	return len(got)
}

// TestTwoSchedulersOnOneStoreFireEachSlotOnce: two instances' schedulers,
// started at different times, on one store, fire each slot of each schedule
// once between them: an "@every" and a cron schedule, over many slots.
func TestTwoSchedulersOnOneStoreFireEachSlotOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "gatehouse.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		entries := []Entry{
			{Name: "beat", Cron: "@every 2s", Conv: conv, Prompt: "b"},
			{Name: "minute", Cron: "* * * * *", Conv: conv, Prompt: "m"},
		}
		logs := &testutil.SyncBuffer{}
		_, inA, cancelA, doneA := start(t, entries, Options{Slots: db, Instance: "a", Log: zerolog.New(logs).Level(zerolog.DebugLevel)})
		defer func() { cancelA(); <-doneA }()
		time.Sleep(time.Second + 300*time.Millisecond) // b starts out of step with a
		_, inB, cancelB, doneB := start(t, entries, Options{Slots: db, Instance: "b", Log: zerolog.Nop()})
		defer func() { cancelB(); <-doneB }()
		seen := map[string]int{}
		var runsA, runsB int
		for range 120 { // 4 minutes
			time.Sleep(2 * time.Second)
			synctest.Wait()
			runsA += drain(inA, seen)
			runsB += drain(inB, seen)
		}
		// beat: 2s, 4s, … 240s; minute: 60s, … 240s.
		if want := 120 + 4; len(seen) != want {
			t.Errorf("%d slots run, want %d", len(seen), want)
		}
		for slot, n := range seen {
			if n != 1 {
				t.Errorf("slot %s run %d times, want once", slot, n)
			}
		}
		if runsA == 0 || runsB == 0 {
			t.Logf("runs: a %d, b %d (either may win every claim)", runsA, runsB)
		}
		if runsA+runsB != len(seen) {
			t.Errorf("a ran %d, b %d: %d in all for %d slots", runsA, runsB, runsA+runsB, len(seen))
		}
		if runsB > 0 && !strings.Contains(logs.String(), "another instance claimed its slot") {
			t.Errorf("a's skips not logged at debug:\n%.2000s", logs)
		}
	})
}

// failingSlots cannot reach the store.
type failingSlots struct{}

func (failingSlots) ClaimScheduleSlot(context.Context, string, time.Time, string) (bool, error) {
	return false, errors.New("database unreachable")
}

// TestUnclaimableSlotIsSkipped: a slot that cannot be claimed (the store
// unreachable) is not run (rather skip than run twice), and is logged.
func TestUnclaimableSlotIsSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &testutil.SyncBuffer{}
		_, in, cancel, done := start(t, []Entry{{Name: "beat", Cron: "@every 2s", Conv: conv, Prompt: "b"}},
			Options{Slots: failingSlots{}, Log: zerolog.New(logs)})
		defer func() { cancel(); <-done }()
		time.Sleep(4 * time.Second)
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 0 {
			t.Fatalf("%d runs without a claimed slot, want 0", len(got))
		}
		if !strings.Contains(logs.String(), "its slot could not be claimed") || !strings.Contains(logs.String(), "database unreachable") {
			t.Errorf("skip not logged:\n%s", logs)
		}
	})
}
