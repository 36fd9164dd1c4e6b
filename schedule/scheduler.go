package schedule

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/core"
)

// Inbox takes the signals of the runs: the Engine.
type Inbox interface {
	Submit(ctx context.Context, s core.Signal) error
}

// Tracker knows what a requester still has outstanding after its turn has
// ended: approvals waiting for a decision, approved actions running, and
// their outcome turns (the hitl broker). A run whose identity has any is
// still going.
type Tracker interface {
	Outstanding(ctx context.Context, requester core.Identity) (bool, error)
}

// SlotClaimer makes each slot of a schedule run on one instance among those
// sharing a store (store.ScheduleSlots, wired in app):
// ClaimScheduleSlot is true for exactly one caller per name and slot.
type SlotClaimer interface {
	ClaimScheduleSlot(ctx context.Context, name string, slot time.Time, instance string) (bool, error)
}

// RunLeaser keeps a schedule's run to one instance at a time among those
// sharing a store (store.Leases, wired in app when the store is
// shared): the lease is held while the run goes on.
type RunLeaser interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// RunLease is the name of the lease a run of the schedule name holds
// (Options.Runs); /status lists it among the leases held.
func RunLease(name string) string { return "schedule:" + name }

// releaseWait bounds releasing a run's lease when the scheduler stops.
const releaseWait = 5 * time.Second

// Options configure a Scheduler.
type Options struct {
	// Tracker, when set, keeps a run going while its approvals are; without
	// one a run ends with its turn.
	Tracker Tracker
	// Slots, when set, is asked before each run, with the time the run was
	// due as its slot: a slot another instance claimed is skipped. Without
	// it every slot runs here.
	Slots SlotClaimer
	// Instance names this instance in the slots it claims and the leases
	// it holds.
	Instance string
	// Runs, when set, makes a run going on another instance hold the
	// slots here too: a run holds the lease RunLease(name) from its start
	// until its turn and its approvals (Tracker) have ended, renewed
	// every LeaseTTL/3, and a slot whose lease another instance holds is
	// skipped. A dead instance's lease expires after LeaseTTL. Without it
	// only the runs of this instance hold its slots.
	Runs     RunLeaser
	LeaseTTL time.Duration
	Log      zerolog.Logger
	// Now is the clock; time.Now when nil. The waits use the time package's
	// timers, so tests drive both with testing/synctest.
	Now func() time.Time
}

// Scheduler runs Entries. It implements core.ScheduleLister for /schedules.
type Scheduler struct {
	o       Options
	changed chan struct{} // signalled by SetEntries to wake Run

	mu      sync.Mutex
	jobs    []*job // under mu: SetEntries replaces it
	started bool
	// running names the schedules whose turn has been submitted and not
	// finished, under mu. By name, not job: a run goes on across a reload
	// that removes its schedule, and one that adds it again.
	running map[string]bool
	// slotsFailing is set while claiming slots fails (the store does not
	// answer): logged as an error once, then at debug level, until a claim
	// works again.
	slotsFailing atomic.Bool

	// leaseMu orders taking and giving up a run's lease (Options.Runs):
	// keeping names the schedules whose lease this instance holds, each
	// renewed by one keeper goroutine, which wakes on the channel when
	// a turn ends. Taken before mu, never while holding it.
	leaseMu sync.Mutex
	keeping map[string]chan struct{}
}

// job is one entry with its parsed schedule and state (under Scheduler.mu).
type job struct {
	Entry
	sched cron.Schedule
	loc   *time.Location
	next  time.Time
}

var _ core.ScheduleLister = (*Scheduler)(nil)

// New parses entries; an error names the entry by its index, as the
// configuration does (schedules[i].cron).
func New(entries []Entry, o Options) (*Scheduler, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Runs != nil && o.LeaseTTL <= 0 {
		return nil, fmt.Errorf("schedule: lease ttl %v is not positive", o.LeaseTTL)
	}
	s := &Scheduler{o: o, changed: make(chan struct{}, 1), running: map[string]bool{}, keeping: map[string]chan struct{}{}}
	jobs, err := parseJobs(entries, o.Now())
	if err != nil {
		return nil, err
	}
	s.jobs = jobs
	return s, nil
}

// parseJobs parses entries into jobs whose next run follows now.
func parseJobs(entries []Entry, now time.Time) ([]*job, error) {
	var jobs []*job
	seen := map[string]int{}
	for i, e := range entries {
		if err := CheckName(e.Name); err != nil {
			return nil, fmt.Errorf("schedules[%d].name: %w", i, err)
		}
		if first, dup := seen[e.Name]; dup {
			return nil, fmt.Errorf("schedules[%d].name: %q is also schedules[%d]", i, e.Name, first)
		}
		seen[e.Name] = i
		sched, err := Parse(e.Cron, e.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("schedules[%d].cron: %w", i, err)
		}
		loc, _ := Location(e.TimeZone) // checked by Parse
		jobs = append(jobs, &job{Entry: e, sched: sched, loc: loc, next: sched.Next(now.In(loc))})
	}
	return jobs, nil
}

// SetEntries replaces the schedules (a configuration reload): entries
// gone stop, new ones start, each next run counted from now. An entry
// kept by name with the same cron and time zone keeps its next run (a
// reload that recomputed it from now would put off an "@every" schedule
// at each reload, for ever if reloads come faster); its conversation and
// prompt apply from that run. A run in progress is not cut, and an entry
// kept by name (or removed and added again) still skips a run while its
// previous one is going: s.running is by name. Errors are New's; on
// error nothing changes.
func (s *Scheduler) SetEntries(entries []Entry) error {
	jobs, err := parseJobs(entries, s.o.Now())
	if err != nil {
		return err
	}
	s.mu.Lock()
	old := make(map[string]*job, len(s.jobs))
	for _, j := range s.jobs {
		old[j.Name] = j
	}
	for _, j := range jobs {
		if o, ok := old[j.Name]; ok && o.Cron == j.Cron && o.TimeZone == j.TimeZone {
			j.next = o.next
		}
	}
	s.jobs = jobs
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return nil
}

// UseTracker sets the Tracker after construction (the broker is built after
// the Engine, which lists the schedules). Call it before Run.
func (s *Scheduler) UseTracker(t Tracker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.o.Tracker = t
}

// Schedules lists the schedules with their next run, in configuration
// order.
func (s *Scheduler) Schedules() []core.ScheduleInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]core.ScheduleInfo, len(s.jobs))
	for i, j := range s.jobs {
		out[i] = core.ScheduleInfo{Name: j.Name, Cron: j.Cron, Conv: j.Conv, Next: j.next.In(j.loc)}
	}
	return out
}

// Run fires the schedules into inbox until ctx ends. The next run of each
// is computed from the time Run starts, so runs missed while the bot was
// down are not replayed. Submissions that wait (a full queue) do not hold
// up the other schedules; Run returns once they have ended too.
func (s *Scheduler) Run(ctx context.Context, inbox Inbox) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return fmt.Errorf("schedule: already running")
	}
	s.started = true
	s.reschedule(s.o.Now(), func(*job) bool { return true })
	s.mu.Unlock()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		var timer *time.Timer
		var tick <-chan time.Time // nil, never ready, when there is no schedule
		if next, ok := s.earliest(); ok {
			timer = time.NewTimer(max(next.Sub(s.o.Now()), 0))
			tick = timer.C
		}
		select {
		case <-ctx.Done():
			stopTimer(timer)
			return nil
		case <-s.changed:
			stopTimer(timer)
			continue
		case <-tick:
		}
		now := s.o.Now()
		s.mu.Lock()
		var due []dueRun // as they are now: SetEntries may change them
		s.reschedule(now, func(j *job) bool {
			if j.next.After(now) {
				return false
			}
			due = append(due, dueRun{j.Entry, j.next})
			return true
		})
		s.mu.Unlock()
		for _, d := range due {
			s.fire(ctx, &wg, inbox, d.Entry, d.slot)
		}
	}
}

// dueRun is an entry whose run is due, and the time it was due.
type dueRun struct {
	Entry
	slot time.Time
}

// reschedule sets the next run, after now, of the jobs pick chooses;
// s.mu is held.
func (s *Scheduler) reschedule(now time.Time, pick func(*job) bool) {
	for _, j := range s.jobs {
		if pick(j) {
			j.next = j.sched.Next(now.In(j.loc))
		}
	}
}

// stopTimer stops t unless it is nil.
func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// earliest returns the soonest next run; false when there is no schedule.
func (s *Scheduler) earliest() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.jobs) == 0 {
		return time.Time{}, false
	}
	return slices.MinFunc(s.jobs, func(a, b *job) int { return a.next.Compare(b.next) }).next, true
}

// fire starts one run of e, its entry as it was when the run was due at
// slot, unless another instance claimed the slot or its previous run is
// still going. The slot is claimed first, so that with several instances
// the one that claims it decides whether it runs.
func (s *Scheduler) fire(ctx context.Context, wg *sync.WaitGroup, inbox Inbox, e Entry, slot time.Time) {
	id := core.ScheduleIdentity(e.Name)
	log := s.o.Log.With().Str("schedule", e.Name).Str("conv", e.Conv.Key()).Logger()
	if s.o.Slots != nil {
		mine, err := s.o.Slots.ClaimScheduleSlot(ctx, e.Name, slot, s.o.Instance)
		switch {
		case err != nil:
			// Rather skip a run than run a slot twice.
			switch {
			case ctx.Err() != nil:
			case !s.slotsFailing.Swap(true):
				log.Error().Err(err).Time("slot", slot).Msg("schedule: run skipped: its slot could not be claimed; skipping runs until the store answers")
			default:
				log.Debug().Err(err).Time("slot", slot).Msg("schedule: run skipped: its slot could not be claimed")
			}
			return
		case s.slotsFailing.CompareAndSwap(true, false):
			log.Info().Msg("schedule: slots can be claimed again")
		}
		if !mine {
			log.Debug().Time("slot", slot).Msg("schedule: run skipped: another instance claimed its slot")
			return
		}
	}
	if busy, why := s.busy(ctx, log, e.Name, id); busy {
		log.Warn().Str("reason", why).Msg("schedule: run skipped: the previous run is still going")
		return
	}
	ended, why := s.start(ctx, wg, log, e.Name, id)
	if why != "" {
		log.Warn().Str("reason", why).Msg("schedule: run skipped: the previous run is still going")
		return
	}
	done := func() {
		s.mu.Lock()
		delete(s.running, e.Name)
		s.mu.Unlock()
		if ended != nil {
			select { // wake the lease's keeper
			case ended <- struct{}{}:
			default:
			}
		}
	}
	sig := core.Signal{
		Kind: core.KindMessage, Conv: e.Conv, From: id, Schedule: e.Name,
		Text: e.Prompt, At: s.o.Now(), Done: done,
	}
	log.Info().Msg("schedule: run")
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := inbox.Submit(ctx, sig); err != nil {
			done()
			if ctx.Err() == nil {
				log.Error().Err(err).Msg("schedule: run not submitted")
			}
		}
	}()
}

// start marks a run of the schedule name as going here. With
// Options.Runs it first takes the run's lease, unless this instance holds
// it already, and starts its keeper; the channel wakes the keeper. A
// reason is returned when the run may not start: another instance's run
// holds the lease, or it could not be taken.
func (s *Scheduler) start(ctx context.Context, wg *sync.WaitGroup, log zerolog.Logger, name string, id core.Identity) (chan struct{}, string) {
	mark := func() {
		s.mu.Lock()
		s.running[name] = true
		s.mu.Unlock()
	}
	if s.o.Runs == nil {
		mark()
		return nil, ""
	}
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	ended, kept := s.keeping[name]
	if !kept {
		held, err := s.o.Runs.AcquireLease(ctx, RunLease(name), s.o.Instance, s.o.LeaseTTL)
		switch {
		case err != nil:
			// Rather skip a run than run beside another instance's.
			if ctx.Err() == nil {
				log.Error().Err(err).Msg("schedule: could not take the run's lease")
			}
			return nil, "its lease could not be taken"
		case !held:
			return nil, "it is still running on another instance"
		}
		ended = make(chan struct{}, 1)
		s.keeping[name] = ended
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.keep(ctx, log, name, id, ended)
		}()
	}
	mark() // under leaseMu: the keeper sees it before it gives the lease up
	return ended, ""
}

// keep renews the run's lease of the schedule name every LeaseTTL/3
// while a run of it goes on here (its turn, then its approvals), and
// gives it up as soon as none does, or when ctx ends.
func (s *Scheduler) keep(ctx context.Context, log zerolog.Logger, name string, id core.Identity, ended <-chan struct{}) {
	lease := RunLease(name)
	tick := time.NewTicker(s.o.LeaseTTL / 3)
	defer tick.Stop()
	release := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseWait)
		defer cancel()
		if err := s.o.Runs.ReleaseLease(rctx, lease, s.o.Instance); err != nil {
			log.Warn().Err(err).Msg("schedule: could not give up the run's lease; it expires by itself")
		}
	}
	for {
		select {
		case <-ctx.Done():
			s.leaseMu.Lock()
			delete(s.keeping, name)
			s.leaseMu.Unlock()
			release()
			return
		case <-ended:
		case <-tick.C:
		}
		if busy, _ := s.busy(ctx, log, name, id); busy {
			held, err := s.o.Runs.AcquireLease(ctx, lease, s.o.Instance, s.o.LeaseTTL)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Error().Err(err).Msg("schedule: could not renew the run's lease")
			case err == nil && !held:
				log.Warn().Msg("schedule: the run's lease expired and another instance holds it")
			}
			continue
		}
		s.leaseMu.Lock()
		s.mu.Lock()
		again := s.running[name] // a run started since the look above
		s.mu.Unlock()
		if again {
			s.leaseMu.Unlock()
			continue
		}
		delete(s.keeping, name)
		release()
		s.leaseMu.Unlock()
		return
	}
}

// busy reports whether the previous run of the schedule name, from
// identity id, is still going, and why; log names the schedule.
func (s *Scheduler) busy(ctx context.Context, log zerolog.Logger, name string, id core.Identity) (bool, string) {
	s.mu.Lock()
	running := s.running[name]
	s.mu.Unlock()
	if running {
		return true, "its turn is still running"
	}
	s.mu.Lock()
	tracker := s.o.Tracker
	s.mu.Unlock()
	if tracker == nil {
		return false, ""
	}
	out, err := tracker.Outstanding(ctx, id)
	if err != nil {
		// Rather skip a run than start one beside a held one.
		log.Error().Err(err).Msg("schedule: could not check the previous run's approvals")
		return true, "its approvals could not be checked"
	}
	if out {
		return true, "it waits on an approval or its approved action"
	}
	return false, ""
}
