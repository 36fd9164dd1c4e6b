package schedule

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/testutil"
)

// TestSetEntries: a removed schedule stops, an added one starts counted
// from the change, a kept one whose run is in progress is not cut and
// still skips while it goes; a bad list changes nothing.
func TestSetEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &testutil.SyncBuffer{}
		s, in, cancel, done := start(t, []Entry{
			{Name: "keep", Cron: "@every 2s", Conv: conv, Prompt: "k"},
			{Name: "gone", Cron: "@every 2s", Conv: conv, Prompt: "g"},
		}, Options{Log: zerolog.New(logs)})
		defer func() { cancel(); <-done }()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		first, _ := in.signals()
		if len(first) != 2 {
			t.Fatalf("%d runs at 2s, want 2", len(first))
		}
		var keep func()
		for _, sig := range first {
			if sig.Schedule == "keep" {
				keep = sig.Done // keep's run goes on across the change
			} else {
				sig.Done()
			}
		}
		if err := s.SetEntries([]Entry{{Name: "bad", Cron: "nonsense", Conv: conv}}); err == nil || !strings.Contains(err.Error(), "schedules[0].cron") {
			t.Fatalf("bad entries: %v", err)
		}
		if err := s.SetEntries([]Entry{
			{Name: "keep", Cron: "@every 2s", Conv: conv, Prompt: "k2"},
			{Name: "new", Cron: "@every 3s", Conv: conv, Prompt: "n"},
		}); err != nil {
			t.Fatal(err)
		}
		if names := scheduleNames(s); names != "keep new" {
			t.Errorf("/schedules lists %q", names)
		}
		time.Sleep(1 * time.Second) // 3s: new's first run ("@every 3s" runs at the epoch's multiples of 3s)
		synctest.Wait()
		got, _ := in.signals()
		if len(got) != 3 || got[2].Schedule != "new" {
			t.Fatalf("%d runs at 3s, want new's first run", len(got))
		}
		got[2].Done()
		time.Sleep(1 * time.Second) // 4s: keep is due but its run goes on
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 3 {
			t.Fatalf("%d runs at 4s, want still 3 (keep skipped, gone stopped)", len(got))
		}
		if !strings.Contains(logs.String(), "run skipped") {
			t.Errorf("keep's skip not logged:\n%s", logs)
		}
		keep()
		time.Sleep(2 * time.Second) // 6s: keep's next run, with the new prompt, and new's
		synctest.Wait()
		got, _ = in.signals()
		var texts []string
		for _, sig := range got[3:] {
			texts = append(texts, sig.Schedule+"="+sig.Text)
			sig.Done()
		}
		slices.Sort(texts) // submitted concurrently
		if strings.Join(texts, " ") != "keep=k2 new=n" {
			t.Errorf("runs after the change: %v, want keep=k2 new=n", texts)
		}
	})
}

// TestSetEntriesStartsAScheduleWhenThereWasNone: Run with no schedule
// waits for a change rather than ending.
func TestSetEntriesStartsAScheduleWhenThereWasNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, in, cancel, done := start(t, nil, Options{Log: zerolog.Nop()})
		defer func() { cancel(); <-done }()
		synctest.Wait()
		if err := s.SetEntries([]Entry{{Name: "beat", Cron: "@every 2s", Conv: conv, Prompt: "p"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 1 {
			t.Fatalf("%d runs, want 1", len(got))
		}
	})
}

func scheduleNames(s *Scheduler) string {
	var names []string
	for _, i := range s.Schedules() {
		names = append(names, i.Name)
	}
	return strings.Join(names, " ")
}

// doneInbox counts the signals submitted and ends each run at once.
type doneInbox struct{ n atomic.Int64 }

func (in *doneInbox) Submit(_ context.Context, s core.Signal) error {
	in.n.Add(1)
	s.Done()
	return nil
}

// TestSetEntriesBesideRuns: a reload that keeps a schedule while its runs
// fire changes what the next run sends without a data race (go test
// -race): the run reads the entry it fires as it was when it was due.
func TestSetEntriesBesideRuns(t *testing.T) {
	var clock atomic.Int64 // each reading an hour later: every run is due at once
	now := func() time.Time { return time.Unix(clock.Add(3600), 0) }
	s, err := New([]Entry{{Name: "beat", Cron: "@every 1s", Conv: conv, Prompt: "p0"}}, Options{Log: zerolog.Nop(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	in := &doneInbox{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, in) }()
	defer func() { cancel(); <-done }()
	i := 0
	testutil.WaitFor(t, "200 runs beside reloads", func() bool {
		i++
		if err := s.SetEntries([]Entry{{Name: "beat", Cron: "@every 1s", Conv: conv, Prompt: fmt.Sprintf("p%d", i)}}); err != nil {
			t.Fatal(err)
		}
		return in.n.Load() >= 200
	})
}

// TestRemovedAndAddedAgainStillSkips: a schedule a reload removes while
// its run goes on, and a later reload adds again under the same name, is
// the same schedule: it still skips while that run goes on.
func TestRemovedAndAddedAgainStillSkips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		beat := []Entry{{Name: "beat", Cron: "@every 2s", Conv: conv, Prompt: "p"}}
		s, in, cancel, done := start(t, beat, Options{Log: zerolog.Nop()})
		defer func() { cancel(); <-done }()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		first, _ := in.signals()
		if len(first) != 1 {
			t.Fatalf("%d runs at 2s, want 1", len(first))
		}
		if err := s.SetEntries(nil); err != nil {
			t.Fatal(err)
		}
		if err := s.SetEntries(beat); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // due again; the first run goes on
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 1 {
			t.Fatalf("%d runs while the first still went on; want 1", len(got))
		}
		first[0].Done()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 2 {
			t.Fatalf("%d runs once the first ended; want 2", len(got))
		}
	})
}

// TestReloadKeepsAnUnchangedSchedulesNextRun: a reload that leaves a
// schedule as it was keeps its next run. Every reload recomputed it from
// the reload's time, so "@every 6s" reloaded every 4s never ran; a
// schedule whose cron a reload changes is counted from that reload.
func TestReloadKeepsAnUnchangedSchedulesNextRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		every6 := []Entry{{Name: "beat", Cron: "@every 6s", Conv: conv, Prompt: "p"}}
		s, in, cancel, done := start(t, every6, Options{Log: zerolog.Nop()})
		defer func() { cancel(); <-done }()
		synctest.Wait()
		ended := 0
		for range 8 { // 32s, a reload every 4s
			time.Sleep(4 * time.Second)
			synctest.Wait()
			if err := s.SetEntries(every6); err != nil {
				t.Fatal(err)
			}
			got, _ := in.signals()
			for _, sig := range got[ended:] {
				sig.Done()
			}
			ended = len(got)
		}
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 5 {
			t.Fatalf("%d runs in 32s of reloads every 4s; want 5 (at 6, 12, 18, 24, 30s)", len(got))
		}
		// A changed cron counts from the reload: "@every 5s" runs next at
		// 35s, the first multiple of 5s since the epoch after 32s.
		if err := s.SetEntries([]Entry{{Name: "beat", Cron: "@every 5s", Conv: conv, Prompt: "p"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // 35s
		synctest.Wait()
		got, _ := in.signals()
		if len(got) != 6 {
			t.Fatalf("%d runs at 35s; want 6", len(got))
		}
		got[5].Done()
		time.Sleep(time.Second) // 36s: the old next run, gone
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 6 {
			t.Fatalf("%d runs at 36s; want still 6 (the old cron's run at 36s is gone)", len(got))
		}
		time.Sleep(4 * time.Second)
		synctest.Wait()
		if got, _ := in.signals(); len(got) != 7 {
			t.Fatalf("%d runs at 40s; want 7", len(got))
		}
	})
}
