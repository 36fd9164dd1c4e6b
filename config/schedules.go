package config

import (
	"fmt"

	"github.com/gatehouse-bot/gatehouse/schedule"
)

// Schedule is one scheduled prompt: at each time Cron names, Prompt enters
// Conversation as a message from the identity "schedule:<Name>".
type Schedule struct {
	// Name identifies the schedule (unique; letters, digits, '_', '.', '-').
	Name string `yaml:"name"`
	// Cron is a robfig/cron/v3 standard expression ("0 9 * * 1-5"),
	// a descriptor ("@daily") or "@every 30s".
	Cron string `yaml:"cron"`
	// Timezone is the IANA zone Cron is read in; empty is UTC.
	Timezone string `yaml:"timezone"`
	// Conversation is where each run is a turn, "gateway:chat[:thread]"
	// as in hitl.notify.
	Conversation string `yaml:"conversation"`
	// Prompt is the message each run sends.
	Prompt string `yaml:"prompt"`
}

// checkSchedules checks the schedules: names unique and usable, cron and
// time zone parseable, conversations on a known gateway, prompts present.
func checkSchedules(ch *checker, list []Schedule) {
	names := map[string]int{}
	for i, s := range list {
		key := fmt.Sprintf("schedules[%d]", i)
		if ch.required(key+".name", s.Name) {
			if err := schedule.CheckName(s.Name); err != nil {
				ch.fail(key+".name", "%v", err)
			} else if first, dup := names[s.Name]; dup {
				ch.fail(key+".name", "duplicate schedule name %s (also schedules[%d]); set distinct names", quote(s.Name), first)
			}
			names[s.Name] = i
		}
		if _, err := schedule.Location(s.Timezone); err != nil {
			ch.fail(key+".timezone", "%v", err)
		} else if ch.required(key+".cron", s.Cron) {
			if _, err := schedule.Parse(s.Cron, s.Timezone); err != nil {
				ch.fail(key+".cron", "%v", err)
			}
		}
		if ch.required(key+".conversation", s.Conversation) {
			ch.conversation(key+".conversation", s.Conversation)
		}
		ch.required(key+".prompt", s.Prompt)
	}
}
