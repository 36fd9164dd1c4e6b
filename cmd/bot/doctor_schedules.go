package main

import (
	"time"

	"github.com/gatehouse-bot/gatehouse/app"
	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/schedule"
)

// doctorSchedules lists each schedule with its next run, and reports one
// whose conversation is on a gateway that is not enabled. Loading the
// configuration has already checked the cron strings, time zones and
// conversation keys.
func doctorSchedules(r *report, cfg *config.Config, now time.Time) {
	if len(cfg.Schedules) == 0 {
		r.line("schedules", "none configured")
		return
	}
	runs := map[string]bool{}
	if sections, err := gatewaytable.Sections(cfg.Gateways); err == nil {
		for _, s := range sections {
			runs[s.Name] = s.Section.Doctor().Runs
		}
	}
	entries, err := app.ScheduleEntries(cfg)
	if err != nil {
		r.problem("schedules", "%v", err)
		return
	}
	s, err := schedule.New(entries, schedule.Options{Now: func() time.Time { return now }})
	if err != nil {
		r.problem("schedules", "%v", err)
		return
	}
	for i, info := range s.Schedules() {
		if !runs[info.Conv.Gateway] {
			r.problem("schedules", "schedules[%d] %s: gateway %s is not enabled, so %s could not be answered", i, info.Name, info.Conv.Gateway, info.Conv.Key())
			continue
		}
		r.line("schedules", "%s: %s in %s, next run %s", info.Name, info.Cron, info.Conv.Key(), info.Next.Format("2006-01-02 15:04:05 MST"))
	}
}
