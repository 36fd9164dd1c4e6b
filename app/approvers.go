package app

import (
	"slices"
	"strings"

	"github.com/gatehouse-bot/gatehouse/app/gatewaytable"
	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/gateways"
)

// CheckApprovers fails, with an error matching ErrConfig that names
// hitl.approvers, when no approver of cfg is on a gateway the gateway
// table enables as cfg configures it (bot doctor asks it; the bot checks
// the same at start-up and on a reload): nobody could approve a held
// action.
func CheckApprovers(cfg *config.Config) error {
	enabled, err := enabledGateways(cfg, nil)
	if err != nil {
		return err
	}
	return checkApprovers(cfg, enabled)
}

// enabledGateways names the gateways that run: the sections of the
// gateway table that run as cfg configures them (one on the bot's own
// terminal counts when it is enabled, as it would run under `bot`) and
// the extra gateways given (tests).
func enabledGateways(cfg *config.Config, extra []gateways.Gateway) (map[string]bool, error) {
	sections, err := gatewaytable.Sections(cfg.Gateways)
	if err != nil {
		return nil, err
	}
	enabled := map[string]bool{}
	for _, s := range sections {
		if s.Section.Doctor().Runs {
			enabled[s.Name] = true
		}
	}
	for _, gw := range extra {
		enabled[gw.Name()] = true
	}
	return enabled, nil
}

// checkApprovers fails, matching ErrConfig, when none of cfg's approvers
// is on a gateway in enabled, or an escalation approver is not.
func checkApprovers(cfg *config.Config, enabled map[string]bool) error {
	if err := checkEscalation(cfg, enabled); err != nil {
		return err
	}
	var off []string
	for _, id := range identities(cfg.HITL.Approvers) {
		if enabled[id.Gateway()] {
			return nil
		}
		if !slices.Contains(off, id.Gateway()) {
			off = append(off, id.Gateway())
		}
	}
	on := make([]string, 0, len(enabled))
	for name := range enabled {
		on = append(on, name)
	}
	slices.Sort(on)
	return configErrorf("hitl.approvers: no approver is on an enabled gateway, so nobody could approve a held action (%s not enabled; enabled: %s): list an identity on an enabled gateway",
		strings.Join(off, ", "), strings.Join(on, ", "))
}
