package core

import (
	"fmt"
	"strings"
	"time"
)

// ScheduleGateway is the gateway part of a schedule's identity. No gateway
// of the table has this name, so no platform user's identity has it.
const ScheduleGateway = "schedule"

// ScheduleIdentity is the identity a schedule's runs come from,
// "schedule:<name>".
func ScheduleIdentity(name string) Identity { return Identity(ScheduleGateway + ":" + name) }

// IsSchedule reports whether id is a schedule's identity. Such an identity
// is never an approver, wherever it is listed.
func (id Identity) IsSchedule() bool {
	return id.Gateway() == ScheduleGateway && len(id) > len(ScheduleGateway)+1
}

// ScheduleInfo describes one configured schedule for /schedules.
type ScheduleInfo struct {
	Name string
	Cron string
	Conv Conversation
	// Next is the next run, in the schedule's time zone.
	Next time.Time
}

// ScheduleLister lists the configured schedules (the scheduler).
type ScheduleLister interface {
	Schedules() []ScheduleInfo
}

// scheduled reports whether s is a run of a configured schedule: a message
// the scheduler made, from that schedule's identity. The configuration is
// its authority, so allow lists do not apply to it.
func scheduled(s Signal) bool {
	return s.Schedule != "" && s.From == ScheduleIdentity(s.Schedule)
}

// schedulesText answers /schedules.
func (e *Engine) schedulesText() string {
	var list []ScheduleInfo
	if e.cfg.Schedules != nil {
		list = e.cfg.Schedules.Schedules()
	}
	if len(list) == 0 {
		return "No schedules are configured (schedules: in the configuration)."
	}
	lines := []string{"Schedules:"}
	for _, s := range list {
		lines = append(lines, fmt.Sprintf("%s — %s in %s, next run %s", s.Name, s.Cron, s.Conv.Key(),
			s.Next.Format("2006-01-02 15:04:05 MST")))
	}
	return strings.Join(lines, "\n")
}
