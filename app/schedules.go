package app

import (
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/schedule"
)

// ScheduleEntries turns the configured schedules into the scheduler's
// entries; errors name the key.
func ScheduleEntries(cfg *config.Config) ([]schedule.Entry, error) {
	out := make([]schedule.Entry, 0, len(cfg.Schedules))
	for i, s := range cfg.Schedules {
		conv, err := core.ParseConversation(strings.TrimSpace(s.Conversation))
		if err != nil {
			return nil, fmt.Errorf("schedules[%d].conversation: %w", i, err)
		}
		out = append(out, schedule.Entry{Name: s.Name, Cron: s.Cron, TimeZone: s.Timezone, Conv: conv, Prompt: s.Prompt})
	}
	return out, nil
}

// buildScheduler builds the scheduler of the configured schedules, each
// slot claimed in the store by instance (so that instances sharing the
// store run it once); with runs (a shared store's leases, else nil) a run
// going on one instance holds the slots on all of them, as it does on its
// own. The tracker (the broker) is set once it exists.
func buildScheduler(cfg *config.Config, slots schedule.SlotClaimer, runs schedule.RunLeaser, instance string, log zerolog.Logger) (*schedule.Scheduler, error) {
	entries, err := ScheduleEntries(cfg)
	if err != nil {
		return nil, err
	}
	return schedule.New(entries, schedule.Options{Slots: slots, Runs: runs, LeaseTTL: cfg.Store.LeaseTTL.D(),
		Instance: instance, Log: log.With().Str("component", "schedule").Logger()})
}

// runLeaser is the store's leases when several instances share it
// (store.Sharer), for the scheduler's runs; nil with SQLite, which stays
// as it was (one process, no lease written).
func (a *App) runLeaser() schedule.RunLeaser {
	if a.receiverLease() == nil {
		return nil
	}
	return a.store
}

// checkScheduleGateways refuses a schedule whose conversation is on a
// gateway that does not run: its runs could never be answered.
func (a *App) checkScheduleGateways(cfg *config.Config) error {
	running := map[string]bool{}
	for _, gw := range a.gateways {
		running[gw.Name()] = true
	}
	for i, s := range cfg.Schedules {
		conv, err := core.ParseConversation(strings.TrimSpace(s.Conversation))
		if err != nil {
			return fmt.Errorf("schedules[%d].conversation: %w", i, err)
		}
		if !running[conv.Gateway] {
			return fmt.Errorf("schedules[%d].conversation: gateway %s is not enabled, so %s could never get a run's reply", i, conv.Gateway, s.Name)
		}
	}
	return nil
}
