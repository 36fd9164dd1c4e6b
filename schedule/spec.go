// Package schedule runs the configured schedules: at each time a schedule's
// cron expression names, its prompt enters its conversation as a chat
// message from the identity "schedule:<name>" (core.ScheduleIdentity),
// through the Engine's Submit like any gateway's message. A run is skipped,
// and logged, while the schedule's previous run is still going, on this
// instance or (with Options.Runs) another sharing the store; runs missed
// while the bot was down are not replayed (the next run is always computed
// from now).
package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
	"github.com/gatehouse-bot/gatehouse/internal/tzdata"
)

// nameRule reports whether name is what a schedule's name may be: 1-64
// letters, digits, '_', '.' or '-', starting with a letter or digit. It
// becomes part of an identity, a log field and a line of /schedules.
func nameRule(name string) bool {
	return name != "" && textutil.Shape(name[:1], 1, 1, textutil.Alnum) && textutil.Shape(name, 1, 64, textutil.Word+".")
}

// CheckName reports whether name is a usable schedule name.
func CheckName(name string) error {
	if !nameRule(name) {
		return fmt.Errorf("want 1-64 letters, digits, '_', '.' or '-' (starting with a letter or digit), got %q", name)
	}
	return nil
}

// Parse reads a cron expression in the standard five-field syntax of
// github.com/robfig/cron/v3, descriptors such as "@hourly" and "@every 30s"
// included, evaluated in the IANA time zone tz ("" is UTC). "@every d" runs
// at the multiples of d since the Unix epoch (every instance on a shared
// store agrees on them), not d after the start. The zone is set
// by tz alone: a CRON_TZ= or TZ= prefix in spec is refused, and so is an
// expression that names no time in the next five years.
func Parse(spec, tz string) (cron.Schedule, error) {
	s := strings.TrimSpace(spec)
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		return nil, fmt.Errorf("%q: set the time zone with the timezone key, not a TZ= prefix", spec)
	}
	loc, err := Location(tz)
	if err != nil {
		return nil, err
	}
	sched, err := cron.ParseStandard(s)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", spec, err)
	}
	switch sc := sched.(type) {
	case *cron.SpecSchedule:
		sc.Location = loc
	case cron.ConstantDelaySchedule:
		sched = every{sc.Delay}
	}
	// Next answers the zero time for a date that never comes (the 30th
	// of February): the scheduler would take it as due at once, always.
	if sched.Next(time.Now().In(loc)).IsZero() {
		return nil, fmt.Errorf("%q: names no time in the next five years (a date that never comes, such as the 30th of February)", spec)
	}
	return sched, nil
}

// every is "@every d" aligned to the Unix epoch: its runs are at the
// multiples of d since 1970-01-01 00:00 UTC, not d after whenever the bot
// started, so that every instance sharing a store agrees on the slots (and
// "@every 1h" runs on the hour). d is whole seconds, at least one (as
// robfig/cron makes it).
type every struct{ d time.Duration }

// Next returns the first multiple of d since the epoch after t, in t's
// location.
func (e every) Next(t time.Time) time.Time {
	d := e.d.Nanoseconds()
	n := t.UnixNano()
	slot := n - n%d
	if n%d < 0 { // floor for a time before the epoch
		slot -= d
	}
	return time.Unix(0, slot+d).In(t.Location())
}

// Location loads the IANA time zone tz; "" is UTC.
func Location(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	loc, err := tzdata.LoadLocation(tz) // zones without /usr/share/zoneinfo too
	if err != nil {
		return nil, fmt.Errorf("time zone %q: want an IANA name such as Europe/Berlin: %w", tz, err)
	}
	return loc, nil
}

// Entry is one configured schedule.
type Entry struct {
	// Name identifies the schedule; its runs come from
	// core.ScheduleIdentity(Name).
	Name string
	// Cron and TimeZone are as given to Parse.
	Cron     string
	TimeZone string
	// Conv is the conversation each run is a turn in.
	Conv core.Conversation
	// Prompt is the message each run sends.
	Prompt string
}
