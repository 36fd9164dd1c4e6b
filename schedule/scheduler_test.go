package schedule

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// inbox records the signals submitted; their Done is left to the test.
type inbox struct {
	mu  sync.Mutex
	got []core.Signal
	at  []time.Time
}

func (in *inbox) Submit(_ context.Context, s core.Signal) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.got = append(in.got, s)
	in.at = append(in.at, time.Now())
	return nil
}

func (in *inbox) signals() ([]core.Signal, []time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]core.Signal(nil), in.got...), append([]time.Time(nil), in.at...)
}

// tracker says a requester has something outstanding while busy is set.
type tracker struct {
	mu   sync.Mutex
	busy map[core.Identity]bool
	err  error
}

func (t *tracker) Outstanding(_ context.Context, id core.Identity) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.busy[id], t.err
}

func (t *tracker) set(id core.Identity, busy bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.busy[id] = busy
}

var conv = core.Conversation{Gateway: "telegram", Chat: "100"}

// start runs a Scheduler of entries in a synctest bubble's goroutine.
func start(t *testing.T, entries []Entry, o Options) (*Scheduler, *inbox, context.CancelFunc, chan error) {
	t.Helper()
	s, err := New(entries, o)
	if err != nil {
		t.Fatal(err)
	}
	in := &inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, in) }()
	return s, in, cancel, done
}

func TestEveryRunsOnTimeAsTheSchedulesIdentity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		_, in, cancel, done := start(t, []Entry{{Name: "beat", Cron: "@every 2s", Conv: conv, Prompt: "ping"}}, Options{Log: zerolog.Nop()})
		for i := range 3 {
			time.Sleep(2 * time.Second)
			synctest.Wait()
			got, at := in.signals()
			if len(got) != i+1 {
				t.Fatalf("after %ds: %d runs, want %d", 2*(i+1), len(got), i+1)
			}
			s := got[i]
			if s.Kind != core.KindMessage || s.From != "schedule:beat" || s.Schedule != "beat" || s.Conv != conv || s.Text != "ping" {
				t.Errorf("run %d signal = %+v", i, s)
			}
			if want := t0.Add(time.Duration(2*(i+1)) * time.Second); !at[i].Equal(want) {
				t.Errorf("run %d at %v, want %v", i, at[i].Sub(t0), want.Sub(t0))
			}
			s.Done()
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
	})
}

func TestRunSkippedWhileThePreviousGoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &testutil.SyncBuffer{}
		tr := &tracker{busy: map[core.Identity]bool{}}
		_, in, cancel, done := start(t, []Entry{{Name: "beat", Cron: "@every 2s", Conv: conv, Prompt: "ping"}},
			Options{Log: zerolog.New(logs), Tracker: tr})
		defer func() { cancel(); <-done }()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		first, _ := in.signals()
		// The turn is still running: the next two times are skipped.
		time.Sleep(4 * time.Second)
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 1 {
			t.Fatalf("%d runs while the first turn ran; want 1", len(got))
		}
		if n := strings.Count(logs.String(), "run skipped"); n != 2 {
			t.Errorf("%d skips logged, want 2:\n%s", n, logs)
		}
		// The turn ends but its held call waits on an approval: still going.
		tr.set("schedule:beat", true)
		first[0].Done()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 1 {
			t.Fatalf("%d runs while the first waited on an approval; want 1", len(got))
		}
		if !strings.Contains(logs.String(), "approval") {
			t.Errorf("the skip does not say it waits on an approval:\n%s", logs)
		}
		// Resolved: the next time runs (not the missed ones, replayed).
		tr.set("schedule:beat", false)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 2 {
			t.Fatalf("%d runs after the approval was resolved; want 2", len(got))
		}
	})
}

func TestTrackerErrorSkips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &testutil.SyncBuffer{}
		tr := &tracker{busy: map[core.Identity]bool{}, err: errors.New("store down")}
		_, in, cancel, done := start(t, []Entry{{Name: "beat", Cron: "@every 1s", Conv: conv, Prompt: "ping"}},
			Options{Log: zerolog.New(logs), Tracker: tr})
		defer func() { cancel(); <-done }()
		time.Sleep(time.Second)
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 0 || !strings.Contains(logs.String(), "store down") {
			t.Errorf("runs %d, log:\n%s; want the run skipped and the error logged", len(got), logs)
		}
	})
}

func TestCronInTimeZoneAndNextRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// synctest's clock starts at 2000-01-01 00:00 UTC.
		s, in, cancel, done := start(t, []Entry{
			{Name: "morning", Cron: "0 9 * * *", TimeZone: "America/New_York", Conv: conv, Prompt: "good morning"},
			{Name: "often", Cron: "@every 1h", Conv: conv, Prompt: "tick"},
		}, Options{Log: zerolog.Nop()})
		defer func() { cancel(); <-done }()
		list := s.Schedules()
		if len(list) != 2 || list[0].Name != "morning" || list[1].Name != "often" {
			t.Fatalf("Schedules() = %+v", list)
		}
		want := time.Date(2000, 1, 1, 9, 0, 0, 0, mustLoc(t, "America/New_York"))
		if !list[0].Next.Equal(want) || list[0].Next.Location().String() != "America/New_York" {
			t.Errorf("morning next = %v, want %v", list[0].Next, want)
		}
		time.Sleep(time.Until(want))
		synctest.Wait()
		got, at := in.signals()
		var morning []time.Time
		for i, s := range got {
			if s.Schedule == "morning" {
				morning = append(morning, at[i])
			}
			s.Done()
		}
		if len(morning) != 1 || !morning[0].Equal(want) {
			t.Errorf("morning ran at %v, want once at %v", morning, want)
		}
		if next := s.Schedules()[0].Next; !next.Equal(want.AddDate(0, 0, 1)) {
			t.Errorf("morning next after its run = %v", next)
		}
	})
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"bad cron", []Entry{{Name: "a", Cron: "61 * * * *"}}, "schedules[0].cron"},
		{"bad zone", []Entry{{Name: "a", Cron: "@daily", TimeZone: "Mars/Olympus"}}, "schedules[0].cron"},
		{"tz prefix", []Entry{{Name: "a", Cron: "CRON_TZ=UTC 0 9 * * *"}}, "timezone key"},
		{"never", []Entry{{Name: "a", Cron: "0 0 30 2 *"}}, "schedules[0].cron"},
		{"duplicate", []Entry{{Name: "a", Cron: "@daily"}, {Name: "a", Cron: "@hourly"}}, "schedules[1].name"},
		{"bad name", []Entry{{Name: "a b", Cron: "@daily"}}, "schedules[0].name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.entries, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New = %v, want an error naming %s", err, c.want)
			}
		})
	}
}

// TestMissedRunsNotReplayed: times that passed before Run started (the bot
// was down) are not run; the first run is the next time after the start
// ("@every 2s": the next multiple of 2s since the epoch).
func TestMissedRunsNotReplayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New([]Entry{{Name: "beat", Cron: "@every 2s", Conv: conv, Prompt: "ping"}}, Options{Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(7 * time.Second) // three times pass while nothing runs
		in := &inbox{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		started := time.Now()
		go func() { done <- s.Run(ctx, in) }()
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 0 {
			t.Fatalf("%d runs replayed at start", len(got))
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		got, at := in.signals()
		if len(got) != 1 || !at[0].Equal(started.Add(time.Second)) {
			t.Errorf("runs at %v; want one, at 8s, the first multiple of 2s after the start at 7s", at)
		}
		cancel()
		<-done
	})
}
